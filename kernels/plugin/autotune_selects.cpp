// autotune_selects.cpp - an LLVM pass plugin of autotune cc (clang 14, new pass manager).
//
// AFL++'s PCGUARD pass counts each side of a scalar `select` with a guard of its own, so a
// comparison the optimiser turned into a conditional move (min/max, clamps, branchless code) is
// still feedback. clang's SanitizerCoverage counts basic blocks and edges only. This pass turns
// every select whose condition is one i1 into a branch diamond (`br c, T, F` and a phi), so the
// SanitizerCoverage that clang runs after the optimizer-last callbacks instruments each side as a
// block of its own: each select gives the fuzzer the same two outcomes PCGUARD's guards give.
// Selects on vector conditions stay as they are (PCGUARD handles them apart, too).
//
// Loaded by `autotune cc` with -fpass-plugin for every compile (AUTOTUNE_CC_SELECTS=0 turns it
// off), built by autotune.runtime.artifacts.select_plugin(). AUTOTUNE_SELECTS_DEBUG=1 prints the
// count per module on stderr.
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include <cstdlib>

using namespace llvm;

namespace {

struct SplitSelects : PassInfoMixin<SplitSelects> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    unsigned split = 0;
    for (Function &F : M) {
      if (F.isDeclaration() || F.hasOptNone()) continue;
      SmallVector<SelectInst *, 32> work;
      for (BasicBlock &BB : F)
        for (Instruction &I : BB)
          if (auto *S = dyn_cast<SelectInst>(&I))
            if (S->getCondition()->getType()->isIntegerTy(1) && S->getTrueValue() != S->getFalseValue())
              work.push_back(S);
      for (SelectInst *S : work) {
        Instruction *ThenTerm = nullptr, *ElseTerm = nullptr;
        SplitBlockAndInsertIfThenElse(S->getCondition(), S, &ThenTerm, &ElseTerm);
        BasicBlock *Tail = S->getParent();
#if LLVM_VERSION_MAJOR >= 18  // insertion by iterator
        PHINode *P = PHINode::Create(S->getType(), 2, S->getName(), Tail->begin());
#else
        PHINode *P = PHINode::Create(S->getType(), 2, S->getName(), &Tail->front());
#endif
        P->addIncoming(S->getTrueValue(), ThenTerm->getParent());
        P->addIncoming(S->getFalseValue(), ElseTerm->getParent());
        P->setDebugLoc(S->getDebugLoc());
        S->replaceAllUsesWith(P);
        S->eraseFromParent();
        ++split;
      }
    }
    const char *dbg = std::getenv("AUTOTUNE_SELECTS_DEBUG");
    if (dbg && *dbg == '1') errs() << "[autotune] " << M.getName() << ": " << split << " selects split\n";
    return split ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "autotune-selects", "1", [](PassBuilder &PB) {
            PB.registerOptimizerLastEPCallback(
#if LLVM_VERSION_MAJOR >= 20
                [](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) { MPM.addPass(SplitSelects()); });
#else
                [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(SplitSelects()); });
#endif
          }};
}
