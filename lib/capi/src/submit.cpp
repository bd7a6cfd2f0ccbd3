// Submissions and their events.
#include "internal.h"

using namespace cgraph;
using capi::fail;
using capi::guard;
using capi::nullArgument;

extern "C" {

cgraph_status cgraph_enqueue(cgraph_executable exe, cgraph_bindings bindings, cgraph_event *out) {
  return cgraph_enqueue_on_stream(exe, bindings, nullptr, out);
}

cgraph_submit_options cgraph_submit_options_default(void) {
  return cgraph_submit_options{0, nullptr};
}

cgraph_status cgraph_enqueue_on_stream(cgraph_executable exe, cgraph_bindings bindings, void *stream,
                                       cgraph_event *out) {
  cgraph_submit_options o = cgraph_submit_options_default();
  o.stream = stream;
  return cgraph_enqueue_ex(exe, bindings, &o, out);
}

cgraph_status cgraph_enqueue_ex(cgraph_executable exe, cgraph_bindings bindings,
                                const cgraph_submit_options *options, cgraph_event *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    if (!exe) return nullArgument("exe");
    if (!bindings) return nullArgument("bindings");
    if (bindings->exe != exe)
      return fail(CGRAPH_ERROR_INVALID, "the bindings were created for another executable");
    auto ev = std::make_unique<cgraph_event_s>();
    ev->keep = bindings->keep;
    const cgraph_submit_options o = options ? *options : cgraph_submit_options_default();
    rt::SubmitOptions so;
    so.stream = o.stream;
    so.profile = o.profile != 0;
    Expected<rt::EventPtr> e = exe->exe->enqueue(bindings->table, bindings->params, so);
    if (!e) return fail(e.error());
    ev->event = std::move(*e);
    ev->exe = exe->exe.get();
    *out = ev.release();
    return CGRAPH_OK;
  });
}

cgraph_status cgraph_event_wait(cgraph_event event) {
  return guard([&] {
    if (!event) return nullArgument("event");
    return fail(event->event->wait());
  });
}

int cgraph_event_is_complete(cgraph_event event) {
  try {
    return event && event->event->isComplete() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

void cgraph_event_release(cgraph_event event) {
  if (!event) return;
  try {
    if (event->event) (void)event->event->wait(); // the submission may use what `keep` holds
  } catch (...) {
  }
  delete event;
}

cgraph_status cgraph_run(cgraph_executable exe, cgraph_bindings bindings) {
  cgraph_event ev = nullptr;
  cgraph_status st = cgraph_enqueue(exe, bindings, &ev);
  if (st != CGRAPH_OK) return st;
  st = cgraph_event_wait(ev);
  cgraph_event_release(ev);
  return st;
}

} // extern "C"
