// autotune_counters.cpp - an LLVM pass plugin of `autotune cc`'s guard build kind
// (AUTOTUNE_CC_INSTRUMENT=guard) for clang 14 to 21 (new pass manager). Our own code.
//
// The guard kind counts blocks with clang's -fsanitize-coverage=inline-8bit-counters: one byte a
// block, incremented inline as
//   %c = load i8, i8* <counter> !nosanitize;  %n = add i8 %c, 1;  store i8 %n, i8* <counter> !nosanitize
// which wraps (255 + 1 = 0): a block hit a multiple of 256 times reads as not hit. AFL++'s PCGUARD
// (afl-clang-fast's default, AFL++ 4.04c) counts NeverZero instead: 255 + 1 = 1, never 0. This pass
// rewrites each increment into that form, `%n = add i8 %c, 1; %n2 = add i8 %n, zext(%n == 0)`
// (x86: `add 1; adc 0`), so the guard build sees what a PCGUARD build sees.
//
// Ordering: clang 14 loads pass plugins before it registers its sanitizers, so a plugin's
// OptimizerLastEP callback runs before clang's ModuleSanitizerCoveragePass, which would find no
// counters yet. The plugin instead registers a pass-instrumentation callback that runs right after
// that pass (on the module it instrumented) and rewrites the increments there; up to LLVM 15
// nothing but code generation (and sanitizers registered after it, e.g. ASan, which skip
// !nosanitize accesses) follows. With LLVM 16 or newer the SanitizerCoverage that instruments is
// the select plugin's, at OptimizerEarly (where AFL++'s PCGUARD runs, autotune_selects.cpp), and
// the module optimisation pipeline that follows optimises the NeverZero increments with the code.
//
// Which increments: an i8 load marked !nosanitize from a global of the counters' section
// (__sancov_cntrs on ELF), whose only user is `add 1`, whose only user is a store marked
// !nosanitize back to the same address. Each counter has exactly one increment, so the pass
// checks that it rewrote as many as the module has counters and stops the compile with a
// message naming the cause otherwise (a SanitizerCoverage whose increments look different would
// otherwise silently keep wrapping).
//
// Loaded by `autotune cc` with -fpass-plugin for every compile of the guard kind, built by
// autotune.runtime.artifacts.counter_plugin(). AUTOTUNE_COUNTERS_DEBUG=1 prints the count per
// module on stderr.
#include "llvm/ADT/Any.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace llvm;

namespace {

// The counter arrays SanitizerCoverage creates: "__sancov_cntrs" (ELF), "__DATA,__sancov_cntrs"
// (Mach-O), ".SCOV$CM" (COFF).
bool counterArray(const GlobalVariable *G) {
  if (!G || !G->hasSection()) return false;
  StringRef s = G->getSection();
  return s.contains("__sancov_cntrs") || s.find(".SCOV$CM") == 0;  // starts with (LLVM 14..21)
}

// The store of `%c + 1` back to the counter %c was loaded from, or null.
StoreInst *increment(LoadInst *L, unsigned NoSan) {
  if (!L->getType()->isIntegerTy(8) || !L->getMetadata(NoSan) || !L->hasOneUse()) return nullptr;
  auto *Add = dyn_cast<BinaryOperator>(L->user_back());
  if (!Add || Add->getOpcode() != Instruction::Add || Add->getOperand(0) != L || !Add->hasOneUse()) return nullptr;
  auto *One = dyn_cast<ConstantInt>(Add->getOperand(1));
  if (!One || !One->isOne()) return nullptr;
  auto *S = dyn_cast<StoreInst>(Add->user_back());
  if (!S || S->getValueOperand() != Add || S->getPointerOperand() != L->getPointerOperand() ||
      !S->getMetadata(NoSan))
    return nullptr;
  return S;
}

// The module's mark that its increments are NeverZero: SanitizerCoverage may run twice on it (with
// LLVM 16 or newer the select plugin runs it at OptimizerEarly, as AFL++'s PCGUARD; clang's own
// run at OptimizerLast then instruments nothing, its allowlist matching nothing), and the second
// time must find nothing to do rather than "counters without increments".
constexpr const char *kDone = "autotune.neverzero";

// Rewrite the module's counter increments into NeverZero, once.
void neverZero(Module &M) {
  if (M.getNamedMetadata(kDone)) return;
  uint64_t counters = 0;
  for (GlobalVariable &G : M.globals())
    if (counterArray(&G))
      if (auto *A = dyn_cast<ArrayType>(G.getValueType())) counters += A->getNumElements();
  if (!counters) return;
  const unsigned NoSan = M.getMDKindID("nosanitize");
  SmallVector<std::pair<LoadInst *, StoreInst *>, 256> work;
  for (Function &F : M)
    for (BasicBlock &BB : F)
      for (Instruction &I : BB) {
        auto *L = dyn_cast<LoadInst>(&I);
        if (!L || !counterArray(dyn_cast<GlobalVariable>(getUnderlyingObject(L->getPointerOperand())))) continue;
        if (StoreInst *S = increment(L, NoSan)) work.push_back({L, S});
      }
  for (auto &[L, S] : work) {
    auto *Add = cast<Instruction>(S->getValueOperand());
    IRBuilder<> B(S);
    Value *Carry = B.CreateZExt(B.CreateICmpEQ(Add, B.getInt8(0)), B.getInt8Ty());
    S->setOperand(0, B.CreateAdd(Add, Carry, "at.nz"));
    // instrumentation, as the load and store are: the select plugin's count of the program's own
    // comparisons kept as values (autotune_selects.cpp, CountSpecials) skips this zext
    for (Value *V : {Carry, cast<Instruction>(Carry)->getOperand(0), S->getValueOperand()})
      if (auto *X = dyn_cast<Instruction>(V)) X->setMetadata(NoSan, MDNode::get(M.getContext(), {}));
  }
  const char *dbg = std::getenv("AUTOTUNE_COUNTERS_DEBUG");
  if (dbg && *dbg == '1')
    errs() << "[autotune-counters] " << M.getSourceFileName() << ": " << work.size() << " of " << counters
           << " counters NeverZero\n";
  M.getOrInsertNamedMetadata(kDone);
  if (work.size() != counters)
    report_fatal_error(Twine("autotune-counters: ") + M.getSourceFileName() + " has " + Twine(counters) +
                       " inline 8-bit counters but " + Twine(static_cast<uint64_t>(work.size())) +
                       " increments of the form load/add 1/store (this clang's SanitizerCoverage "
                       "differs from clang 14's); build with AUTOTUNE_CC_INSTRUMENT=blocks instead",
                       false);
}

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "autotune-counters", "1", [](PassBuilder &PB) {
            PassInstrumentationCallbacks *PIC = PB.getPassInstrumentationCallbacks();
            if (!PIC)
              report_fatal_error("autotune-counters: clang gave the plugin no pass instrumentation "
                                 "callbacks, so it cannot run after SanitizerCoverage; build with "
                                 "AUTOTUNE_CC_INSTRUMENT=blocks instead",
                                 false);
            PIC->registerAfterPassCallback([](StringRef Pass, Any IR, const PreservedAnalyses &) {
              // the pass's name: ModuleSanitizerCoveragePass up to LLVM 16, SanitizerCoveragePass since
              if (Pass != "ModuleSanitizerCoveragePass" && Pass != "SanitizerCoveragePass") return;
              if (const Module *const *M = any_cast<const Module *>(&IR))  // LLVM 14..21 alike
                neverZero(*const_cast<Module *>(*M));
            });
          }};
}
