#include "cgraph/kernel/opencl_compiler.h"

#include <memory>
#include <sstream>

#include <LLVMSPIRVLib.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include "cgraph/kernel/spirv.h"
#include "internal.h"

namespace cgraph {
namespace {

bool isKnownStd(const std::string &s) { return s == "CL1.2" || s == "CL2.0" || s == "CL3.0"; }

// clang 14's builtin tables declare wait_group_events(int, __generic event_t *) even
// for OpenCL C 1.2, which has no generic address space: the call then needs the
// GenericPointer capability that 1.2 devices lack. opencl-c.h declares the private
// pointer overload for 1.2; declaring it here too makes overload resolution pick it
// (exact match), giving the same SPIR-V as the full header.
constexpr const char *kCl12PreludeName = "/cgraph-internal/cl12_prelude.h";
constexpr const char *kCl12Prelude =
    "void __attribute__((overloadable)) wait_group_events(int, __private event_t *);\n";

bool needsCl12Prelude(const CompileOptions &opts) { return !opts.fullHeader && opts.clStd == "CL1.2"; }

std::vector<std::string> cc1Args(const std::string &fileName, const CompileOptions &opts,
                                 const std::string &resourceDir) {
  std::vector<std::string> args = {
      "-triple", "spir64-unknown-unknown", "-cl-std=" + opts.clStd, "-finclude-default-header",
      // -O0 keeps the IR simple enough for the LLVM 14 translator to emit valid
      // SPIR-V; without optnone, each target can still optimize after lowering.
      "-O0", "-disable-O0-optnone", "-emit-llvm-bc", "-fno-dwarf-directory-asm"};
  // With -finclude-default-header this makes clang include only opencl-c-base.h and
  // declare builtins lazily from its tables: parsing opencl-c.h dominates a compile.
  if (!opts.fullHeader) args.push_back("-fdeclare-opencl-builtins");
  if (needsCl12Prelude(opts)) {
    args.push_back("-include");
    args.push_back(kCl12PreludeName);
  }
  if (!resourceDir.empty()) {
    args.push_back("-resource-dir");
    args.push_back(resourceDir);
  }
  for (const std::string &d : opts.includeDirs) {
    args.push_back("-I");
    args.push_back(d);
  }
  for (const std::string &d : opts.defines) args.push_back("-D" + d);
  for (const std::string &a : opts.extraArgs) args.push_back(a);
  args.push_back("-x");
  args.push_back("cl");
  args.push_back(fileName);
  return args;
}

// -O0 marks every function noinline (and optnone unless disabled); later
// per-target pipelines must be free to inline and optimize.
void dropO0Attributes(llvm::Module &m) {
  for (llvm::Function &f : m) {
    f.removeFnAttr(llvm::Attribute::OptimizeNone);
    f.removeFnAttr(llvm::Attribute::NoInline);
  }
}

std::string trimTrailingNewlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

} // namespace

std::string canonicalBuildOptions(const CompileOptions &opts) {
  std::string s = "-cl-std=" + opts.clStd;
  for (const std::string &d : opts.defines) s += " -D" + d;
  for (const std::string &i : opts.includeDirs) s += " -I" + i;
  for (const std::string &a : opts.extraArgs) s += " " + a;
  return s;
}

Expected<CompileResult> compileOpenCL(const std::string &source, const std::string &fileName,
                                      const CompileOptions &opts) {
  if (!isKnownStd(opts.clStd))
    return makeError(fileName + ": unsupported OpenCL C version '" + opts.clStd +
                     "' (expected CL1.2, CL2.0 or CL3.0)");
  if (fileName.empty()) return makeError("compileOpenCL: empty file name");
  const std::string &resourceDir = kernel_detail::clangResourceDir();
  if (resourceDir.empty())
    return makeError(fileName + ": cannot find clang's resource directory with opencl-c.h "
                                "(set CGRAPH_CLANG_RESOURCE_DIR)");

  // Diagnostics are printed one per line, without the source excerpt, into a string.
  std::string diagText;
  llvm::raw_string_ostream diagStream(diagText);
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> diagOpts = new clang::DiagnosticOptions();
  diagOpts->ShowColors = false;
  diagOpts->ShowCarets = false;
  diagOpts->ShowSourceRanges = false;
  diagOpts->ShowFixits = false;
  diagOpts->ShowOptionNames = true;
  auto *printer = new clang::TextDiagnosticPrinter(diagStream, diagOpts.get());
  llvm::IntrusiveRefCntPtr<clang::DiagnosticIDs> diagIds = new clang::DiagnosticIDs();
  llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> diags =
      new clang::DiagnosticsEngine(diagIds, diagOpts, printer, /*ShouldOwnClient=*/true);

  std::vector<std::string> args = cc1Args(fileName, opts, resourceDir);
  std::vector<const char *> argv;
  argv.reserve(args.size());
  for (const std::string &a : args) argv.push_back(a.c_str());

  auto invocation = std::make_shared<clang::CompilerInvocation>();
  bool argsOk = clang::CompilerInvocation::CreateFromArgs(*invocation, argv, *diags);
  diagStream.flush();
  if (!argsOk || diags->hasErrorOccurred())
    return makeError(fileName + ": invalid compile options: " + trimTrailingNewlines(diagText));
  // The source is a memory buffer under the caller's file name, so diagnostics read
  // `saxpy.cl:3:5: error: ...` and quoted includes resolve beside that name.
  invocation->getPreprocessorOpts().addRemappedFile(
      fileName, llvm::MemoryBuffer::getMemBufferCopy(source, fileName).release());
  if (needsCl12Prelude(opts))
    invocation->getPreprocessorOpts().addRemappedFile(
        kCl12PreludeName, llvm::MemoryBuffer::getMemBuffer(kCl12Prelude, kCl12PreludeName).release());
  invocation->getFrontendOpts().DisableFree = false;
  // ExecuteAction reads the invocation's own copy (e.g. to print "N errors
  // generated" to stderr when carets are on); a library must not print.
  clang::DiagnosticOptions &invDiag = invocation->getDiagnosticOpts();
  invDiag.ShowColors = false;
  invDiag.ShowCarets = false;
  invDiag.ShowSourceRanges = false;
  invDiag.ShowFixits = false;

  clang::CompilerInstance ci;
  ci.setInvocation(invocation);
  ci.setDiagnostics(diags.get());

  auto context = std::make_unique<llvm::LLVMContext>();
  clang::EmitLLVMOnlyAction action(context.get());
  bool ran = ci.ExecuteAction(action);
  diagStream.flush();
  if (!ran || diags->hasErrorOccurred()) {
    std::string text = trimTrailingNewlines(diagText);
    if (text.empty()) text = fileName + ": error: compilation failed";
    return makeError(text);
  }
  std::unique_ptr<llvm::Module> module = action.takeModule();
  if (!module) return makeError(fileName + ": error: clang produced no module");
  dropO0Attributes(*module);

  CompileResult result;
  result.warnings = trimTrailingNewlines(diagText);
  result.buildOptions = canonicalBuildOptions(opts);
  {
    llvm::SmallVector<char, 0> buf;
    llvm::raw_svector_ostream os(buf);
    llvm::WriteBitcodeToFile(*module, os);
    result.spirBitcode.assign(buf.begin(), buf.end());
  }

  SPIRV::TranslatorOpts topts(SPIRV::VersionNumber::SPIRV_1_0);
  // Keeps the OpenCL type spellings (uint vs int, typedef names) for reflection.
  topts.setPreserveOCLKernelArgTypeMetadataThroughString(true);
  std::ostringstream spirvStream;
  std::string err;
  if (!llvm::writeSpirv(module.get(), topts, spirvStream, err))
    return makeError(fileName + ": SPIR-V translation failed: " + err);
  const std::string bytes = spirvStream.str();
  result.spirv.assign(bytes.begin(), bytes.end());
  // The translator's output is untrusted input too (docs/architecture.md).
  CGRAPH_RETURN_IF_ERROR(validateSpirv(result.spirv.data(), result.spirv.size(), fileName));
  return result;
}

} // namespace cgraph
