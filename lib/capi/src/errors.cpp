// Status codes, the thread-local last error, and the library-level queries.
#include "internal.h"

namespace cgraph::capi {

namespace {
thread_local std::string lastError;
} // namespace

cgraph_status fail(cgraph_status status, const std::string &message) {
  try {
    lastError = message;
  } catch (...) {
    lastError.clear(); // no memory for the message: the status still tells the kind
  }
  return status;
}

cgraph_status fail(const Error &e) {
  if (!e) return CGRAPH_OK;
  return fail(static_cast<cgraph_status>(static_cast<int>(e.code())), e.message());
}

cgraph_status nullArgument(const char *what) {
  return fail(CGRAPH_ERROR_INVALID, std::string(what) + " is null");
}

} // namespace cgraph::capi

using namespace cgraph;

extern "C" {

const char *cgraph_version(void) {
  return CGRAPH_CAPI_VERSION;
}

int cgraph_api_version(void) {
  return CGRAPH_API_VERSION;
}

const char *cgraph_last_error(void) {
  return capi::lastError.c_str();
}

const char *cgraph_status_name(cgraph_status status) {
  if (status == CGRAPH_OK) return "ok";
  const int c = static_cast<int>(status);
  if (c < static_cast<int>(ErrorCode::Invalid) || c > static_cast<int>(ErrorCode::Internal))
    return "unknown";
  return errorCodeName(static_cast<ErrorCode>(c));
}

const char *cgraph_type_name(cgraph_type type) {
  if (type < CGRAPH_TYPE_I8 || type > CGRAPH_TYPE_F64) return "unknown";
  return scalarName(static_cast<ScalarType>(type));
}

size_t cgraph_type_size(cgraph_type type) {
  if (type < CGRAPH_TYPE_I8 || type > CGRAPH_TYPE_F64) return 0;
  return scalarSize(static_cast<ScalarType>(type));
}

} // extern "C"
