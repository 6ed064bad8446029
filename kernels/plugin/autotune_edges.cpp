// autotune_edges.cpp - the pass of `autotune cc`'s inline build kinds, an LLVM pass plugin for clang 14
// to 21 (new pass manager). Our own code. Two modes, chosen by the environment of the compile (autotune cc
// sets it and checks the values; kernels/cov_ids.c and cov_sink.c serve the result):
// - edge (AUTOTUNE_CC_INSTRUMENT unset or another kind): edges counted as AFL++'s CLASSIC mode does
//   (afl-llvm-pass), with the map size chosen at run time;
// - ngram (AUTOTUNE_CC_INSTRUMENT=ngram, AUTOTUNE_CC_NGRAM=N, 2 <= N <= 16 as AFL++'s NGRAM_SIZE_MAX):
//   N-grams of blocks keyed as AFL++'s NGRAM-N does (see "ngram" below);
// - ctx (AUTOTUNE_CC_INSTRUMENT=ctx, AUTOTUNE_CC_CTX=ctx|caller|ctx-2|ctx-4|ctx-8): edges keyed with the
//   call context, as AFL++'s CTX, CALLER and CTX-K do (see "ctx" below).
//
// edge: at each instrumented block, inline (no call):
//   idx = (cur ^ prev) & mask;  map[idx] = map[idx] + 1, skipping 0 (NeverZero);  prev = cur >> 1
// - cur: the block's id, fixed at compile time (blockId below: a seeded hash of the module's
//   source file name, the function's (mangled) name and the block's index in the function), so
//   two builds of the same sources from the same command lines give the same ids.
// - prev: the thread-local uint32_t `autotune_edge_prev`; the runtime zeroes it when an execution
//   starts (kernels/cov_sink.c cov_exec_begin).
// - map, mask: the fields of the global `autotune_edge_area` {uint8_t *map; uint32_t mask;} the
//   runtime sets: mask = map size - 1 (a power of two), map = the counters (afl-fuzz's shared
//   memory); before that, a dummy area and mask 0, so nothing is written out of bounds.
// - NeverZero: what AFL++ 4.04c's CLASSIC does by default (checked with afl-showmap -r: an edge
//   hit 256 times reads 1); `add 1; adc 0` on x86.
// Which blocks: as CLASSIC, every block of a single-block function, and in other functions every
// block that has a predecessor with more than one successor (a block entered only by fallthrough
// from one predecessor adds nothing to the path that predecessor did not say). The select-splitting
// pass (autotune_selects.cpp) runs before this one when both are loaded (plugin order), so both
// sides of a split select are such blocks.
// Each module with instrumented blocks registers its block count from a constructor
// (autotune_edge_register), so the runtime can tell an edge build and refuse mixed ones.
// Code generation (measured with callgrind on the demo, benchmarks/aflfs_bench.py --build-kinds):
// - the map and mask loads carry !invariant.load: they change only between executions, when no
//   instrumented function runs (kernels/cov_ids.c), so the backend may keep them in registers across a
//   function and its loops instead of reloading both at every block (our counter store could
//   otherwise alias them): 3,968 -> 3,867 instructions per execution;
// - the prev load is volatile: it is then not folded into the xor, whose 32-bit constant id stays
//   an immediate instead of a register the allocator rematerialises at each block under pressure:
//   3,867 -> 3,725 (AFL++ CLASSIC: 3,775). Nothing else reorders it: this pass runs last.
// Every load and store carries !nosanitize, so a sanitizer pass that runs after this one (ASan at
// the same extension point) leaves them alone.
//
//
// ngram (N >= 2): the thread-local, 16-byte aligned uint32_t autotune_ngram_hist[20] holds X = hist[0]
// and the window w[0..N-2] = hist[4..N+2]: the last N-1 instrumented blocks' (id >> 1), newest first;
// X is their xor. At each block:
//   idx = (cur ^ X) & mask;  map[idx]++ (NeverZero);
//   out = w[N-2];  w[1..N-2] = w[0..N-3];  w[0] = cur >> 1;  X = X ^ out ^ (cur >> 1)
// The window moves as whole aligned <4 x i32> vectors (hist[4..7], hist[8..11], ...): each is loaded,
// shifted one lane (the lane leaving a vector enters the next) and stored back whole, so every load
// reads exactly what one earlier store wrote and the store buffer forwards it. Moving it word by word
// through unaligned pieces (one 4-byte store, then a 16-byte load over it and the next words) made
// every block wait for its stores to retire: no more instructions (callgrind), but lz4 ran at 0.88-0.91x
// NGRAM-8's execs/s under afl-fuzz before this layout.
// (N = 2: X is the one previous block, hist[0] alone: the edge mode's key). So the slot is AFL++'s
// NGRAM-N key, cur ^ (p1 >> 1) ^ ... ^ (p(N-1) >> 1) over the previous N-1 blocks' ids, masked to the
// run-time map (AFL++ keeps an <N-1 x u16> vector, xor-reduces it at each block and shifts it; we keep
// the xor itself and update it with the one id that leaves the window: one xor pair instead of a
// reduction, and 32-bit ids so the map may exceed 2^16 slots). Fewer than N-1 blocks into an
// execution, the missing ones are 0 (the runtime zeroes the window when an execution starts), as in
// AFL++. Each module registers (blocks, N) (autotune_ngram_register); the runtime serves ngram-N only.
//
// ctx (K callers: K = 0 for the whole call stack (ctx), 1 (caller), 2, 4 or 8 (ctx-K)): a function's
// context X is the xor of its K nearest instrumented callers' function ids (all of them for K = 0),
// read once when the function is entered; each of its blocks counts
//   idx = (cur ^ prev ^ X) & mask;  map[idx]++ (NeverZero);  prev = cur >> 1
// (the edge key xor the context: the runtime's ctx-like key under AUTOTUNE_KEY_HASH=afl, kernels/cov_keys.h).
// A function's id F is the id its block 2^32 - 1 would have (blockId below). The thread-local, 16-byte
// aligned uint32_t autotune_ctx_hist[12] holds what the next function entered reads: [0] its X, [1] Y,
// the xor of its K-1 nearest callers, and [4..K+2] those callers' ids, newest first (K >= 3 only; K = 2
// keeps its one caller in Y). A function with calls computes its callees' state when it is entered,
//   X' = X ^ F (K = 0);  X' = F (K = 1);  X' = F ^ Y,  Y' = F ^ Y ^ w[K-2],  w' = F, w[0..K-3] (K >= 2),
// stores it before each call (intrinsics and inline asm excepted) and stores its own state back before
// each return. Stored before the call, not once at the entry: a callee that returned, an exception or a
// longjmp may have left another function's state, and the next call still hands the right one on; stored
// back at the return: a caller we do not instrument (a libFuzzer driver, qsort calling a comparator) finds
// its callees' state as it left it. Functions without calls store nothing. The runtime zeroes the state
// when an execution starts, so the harness entry point (called by the uninstrumented driver) has X = 0.
// AFL++'s pass (CTX, CALLER, CTX-K) stores the callees' state at the entry and restores it at the returns.
// Each module registers (blocks, K + 1) (autotune_ctx_register); the runtime serves that metric only.
//
// indexed (AUTOTUNE_CC_INDEX=1, any mode): the key counts through the runtime's two-level map instead of
// a flat map (BigMap, DSN 2021; kernels/bigmap.h), inline as well:
//   e = area.index[key & area.imask];  if (e == 0) e = autotune_index_assign(key & imask);  map[e]++ (NeverZero)
// e is the key's dense slot + 1 (bigmap.h's encoding; 0: not seen yet, a cold call that assigns the next
// slot in the index the fork server's children share) and area.map points one byte before the dense
// counters, which afl-fuzz scans: as many as the keys need, with collisions only in the index (sized at
// run time, AUTOTUNE_INDEX_SIZE). The module registers it (autotune_index_register); the runtime refuses a
// flat layout for such a build, and a flat one's modules mixed with indexed ones.
//
// AUTOTUNE_EDGES_DEBUG=1 (at compile time) prints every instrumented block on stderr as
// "[autotune-edges] <module> <function> <index> <id as 8 hex digits>" and a per-module count.
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cstdint>
#include <cstdlib>

using namespace llvm;

namespace {

// The block-id seed: "autotune" in ASCII. Changing it renumbers every block of every build.
constexpr uint64_t kEdgeSeed = 0x6175746f74756e65ull;
constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;

uint64_t mix64(uint64_t x) {  // splitmix64's finaliser (kernels/cov_ids.c cov_mix64)
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t fnv1a64(StringRef s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// id = low 32 bits of mix64(FNV-1a-64(module "\0" function) ^ seed ^ index * golden), where the
// FNV-1a hash starts from its standard offset basis 0xcbf29ce484222325.
uint32_t blockId(StringRef module, StringRef function, uint32_t index) {
  uint64_t h = fnv1a64(module, 0xcbf29ce484222325ull);
  h = fnv1a64(StringRef("\0", 1), h);
  h = fnv1a64(function, h);
  return static_cast<uint32_t>(mix64(h ^ kEdgeSeed ^ (static_cast<uint64_t>(index) * kGolden)));
}

// Functions never instrumented: compiler/sanitizer helpers, static initialisers, libFuzzer's
// optional callbacks that are not part of an execution, and "__afl" functions, which AFL++'s
// passes skip too (kernels/canary.h names its functions so, to stay out of every coverage).
bool ignored(const Function &F) {
  if (F.isDeclaration() || F.hasFnAttribute(Attribute::Naked) ||
      F.hasFnAttribute(Attribute::NoSanitizeCoverage) ||
      F.hasFnAttribute(Attribute::DisableSanitizerInstrumentation))
    return true;
  static const char *const prefixes[] = {
      "llvm.", "asan.", "msan.", "sancov.", "autotune.", "__asan", "__msan", "__ubsan", "__lsan",
      "__tsan", "__sanitizer", "__sancov", "_GLOBAL__sub_I", "__cxx_global_var_init",
      "LLVMFuzzerInitialize", "LLVMFuzzerCustomMutator", "LLVMFuzzerCustomCrossOver", "__afl"};
  StringRef name = F.getName();
  for (const char *p : prefixes)
    if (name.find(p) == 0) return true;  // starts with (LLVM 14..21)
  return false;
}

bool selected(const BasicBlock &BB, const Function &F) {
  if (BB.getFirstInsertionPt() == BB.end()) return false;  // catchswitch: no room for code
  if (BB.isEHPad() && !BB.isLandingPad()) return false;   // funclet pads (not on ELF targets)
  if (F.size() == 1) return true;
  for (const BasicBlock *Pred : predecessors(&BB))
    if (Pred->getTerminator()->getNumSuccessors() > 1) return true;
  return false;
}

constexpr unsigned kNgramMax = 16;   // AFL++'s NGRAM_SIZE_MAX
constexpr unsigned kWindowAt = 4;    // the window's first word (16-byte aligned): X, then 3 words of padding
constexpr unsigned kHistWords = kWindowAt + kNgramMax;  // 4 vectors hold a window of N - 1 <= 15 blocks

constexpr unsigned kCtxHistWords = 12;  // X, Y, 2 words of padding, a window of up to 7 callers (2 vectors)
constexpr uint32_t kFunctionIndex = 0xffffffffu;  // a function's id is its block 2^32 - 1's

// The pass's mode from the compile's environment: ngram > 0 for the ngram mode, ctx > 0 (K + 1) for the
// ctx mode, neither for the edge mode. A bad value is a compile error: autotune cc refuses it before, so
// only a direct -fpass-plugin user meets this.
struct Mode {
  unsigned ngram = 0;  // N
  unsigned ctx = 0;    // K + 1: 1 for the whole call stack (ctx), 2 for caller, 3, 5, 9 for ctx-2/4/8
  unsigned callers() const { return ctx - 1; }
};

Mode modeFromEnv() {
  Mode m;
  const char *kind = std::getenv("AUTOTUNE_CC_INSTRUMENT");
  if (kind && StringRef(kind) == "ngram") {
    const char *v = std::getenv("AUTOTUNE_CC_NGRAM");
    if (!v || StringRef(v).getAsInteger(10, m.ngram) || m.ngram < 2 || m.ngram > kNgramMax)
      report_fatal_error(Twine("autotune-edges: AUTOTUNE_CC_INSTRUMENT=ngram needs AUTOTUNE_CC_NGRAM=N with ") +
                             "2 <= N <= " + Twine(kNgramMax) + " (got '" + (v ? v : "") + "')",
                         false);
  } else if (kind && StringRef(kind) == "ctx") {
    const char *v = std::getenv("AUTOTUNE_CC_CTX");
    const StringRef s(v ? v : "");
    m.ctx = s == "ctx" ? 1 : s == "caller" ? 2 : s == "ctx-2" ? 3 : s == "ctx-4" ? 5 : s == "ctx-8" ? 9 : 0;
    if (!m.ctx)
      report_fatal_error(Twine("autotune-edges: AUTOTUNE_CC_INSTRUMENT=ctx needs AUTOTUNE_CC_CTX=ctx, caller, ") +
                             "ctx-2, ctx-4 or ctx-8 (got '" + s + "')",
                         false);
  }
  return m;
}

// Whether a call hands the context on: not an intrinsic, not inline asm.
bool passesContext(const CallBase &CB) {
  if (CB.isInlineAsm()) return false;
  const Function *Callee = CB.getCalledFunction();
  return !(Callee && Callee->isIntrinsic());
}

struct EdgeCoverage : PassInfoMixin<EdgeCoverage> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    const Mode mode = modeFromEnv();
    const unsigned ngram = mode.ngram;
    LLVMContext &C = M.getContext();
    Type *I8 = Type::getInt8Ty(C), *I32 = Type::getInt32Ty(C);
#if LLVM_VERSION_MAJOR >= 17  // opaque pointers only
    PointerType *I8P = PointerType::getUnqual(C);
#else
    PointerType *I8P = PointerType::getUnqual(I8);
#endif
    // A program (PIE or not PIC): the runtime's globals are in the same executable, so they are
    // reached directly and the thread-local by the local-exec model. Otherwise (PIC: maybe a
    // shared library) through the GOT and the initial-exec model (the variable is in the
    // executable's static TLS block, where the runtime is linked).
    const bool exe = M.getPIELevel() != PIELevel::Default || M.getPICLevel() == PICLevel::NotPIC;
    // {uint8_t *map; uint32_t mask; uint32_t *index; uint32_t imask;}: the last two for an indexed build
#if LLVM_VERSION_MAJOR >= 17
    PointerType *I32P = PointerType::getUnqual(C);
#else
    PointerType *I32P = PointerType::getUnqual(I32);
#endif
    StructType *AreaTy = StructType::get(C, {I8P, I32, I32P, I32});
    const char *ix = std::getenv("AUTOTUNE_CC_INDEX");
    const bool indexed = ix && StringRef(ix) == "1";
    FunctionCallee Assign;
    if (indexed) {
      Assign = M.getOrInsertFunction("autotune_index_assign", I32, I32);
      if (auto *AF = dyn_cast<Function>(Assign.getCallee())) AF->addFnAttr(Attribute::NoUnwind);
    }
    auto *Area = dyn_cast_or_null<GlobalVariable>(M.getNamedValue("autotune_edge_area"));
    if (!Area)
      Area = new GlobalVariable(M, AreaTy, false, GlobalValue::ExternalLinkage, nullptr, "autotune_edge_area");
    // edge: uint32_t autotune_edge_prev; ngram: uint32_t autotune_ngram_hist[kHistWords] (X, then the window)
    ArrayType *HistTy = ArrayType::get(I32, kHistWords);
    Type *PrevTy = ngram ? static_cast<Type *>(HistTy) : I32;
    const char *prevName = ngram ? "autotune_ngram_hist" : "autotune_edge_prev";
    auto *Prev = dyn_cast_or_null<GlobalVariable>(M.getNamedValue(prevName));
    if (!Prev)
      Prev = new GlobalVariable(M, PrevTy, false, GlobalValue::ExternalLinkage, nullptr, prevName, nullptr,
                                exe ? GlobalValue::LocalExecTLSModel : GlobalValue::InitialExecTLSModel);
    if (ngram) Prev->setAlignment(Align(16));  // as kernels/cov_ids.c defines it
    // ctx: uint32_t autotune_ctx_hist[kCtxHistWords] (X, Y, the window), 16-byte aligned
    ArrayType *CtxTy = ArrayType::get(I32, kCtxHistWords);
    GlobalVariable *Ctx = nullptr;
    if (mode.ctx) {
      Ctx = dyn_cast_or_null<GlobalVariable>(M.getNamedValue("autotune_ctx_hist"));
      if (!Ctx)
        Ctx = new GlobalVariable(M, CtxTy, false, GlobalValue::ExternalLinkage, nullptr, "autotune_ctx_hist", nullptr,
                                 exe ? GlobalValue::LocalExecTLSModel : GlobalValue::InitialExecTLSModel);
      Ctx->setAlignment(Align(16));
    }
    if (exe) {
      Area->setDSOLocal(true);
      Prev->setDSOLocal(true);
      if (Ctx) Ctx->setDSOLocal(true);
    }
    MDNode *NoSan = MDNode::get(C, {});
    const unsigned NoSanKind = M.getMDKindID("nosanitize");
    auto nosan = [&](Instruction *I) { I->setMetadata(NoSanKind, NoSan); };

    const char *dbg = std::getenv("AUTOTUNE_EDGES_DEBUG");
    const bool debug = dbg && *dbg == '1';
    const StringRef module = M.getSourceFileName();
    auto *V4 = FixedVectorType::get(I32, 4);
#if LLVM_VERSION_MAJOR >= 17  // opaque pointers: a word's pointer is the vector's
    auto vecPtr = [](IRBuilder<> &, Value *W) { return W; };
#else
    auto vecPtr = [&](IRBuilder<> &B, Value *W) { return B.CreateBitCast(W, V4->getPointerTo()); };
#endif
    uint32_t blocks = 0;
    for (Function &F : M) {
      if (ignored(F)) continue;
      SmallVector<std::pair<BasicBlock *, uint32_t>, 64> work;  // decide on the unchanged CFG
      SmallVector<CallBase *, 16> calls;
      SmallVector<ReturnInst *, 4> rets;
      uint32_t index = 0;
      for (BasicBlock &BB : F) {
        if (selected(BB, F)) work.push_back({&BB, index});
        ++index;
        if (!mode.ctx) continue;
        for (Instruction &I : BB) {
          if (auto *CB = dyn_cast<CallBase>(&I)) {
            if (passesContext(*CB)) calls.push_back(CB);
          } else if (auto *R = dyn_cast<ReturnInst>(&I)) {
            auto *Tail = dyn_cast_or_null<CallInst>(R->getPrevNode());
            if (!(Tail && Tail->isMustTailCall())) rets.push_back(R);  // nothing may come between the two
          }
        }
      }
      // ctx: the function's context X (and its callers' state), read at its entry; the state its
      // callees read, stored before each call; its own, stored back before each return
      Value *X = nullptr;
      Instruction *EntryAfter = nullptr;  // the entry block's instrumentation goes after the reads
      if (mode.ctx) {
        const unsigned K = mode.callers();
        const uint32_t fid = blockId(module, F.getName(), kFunctionIndex);
        IRBuilder<> B(&*F.getEntryBlock().getFirstInsertionPt());
        auto word = [&](unsigned i) { return B.CreateConstInBoundsGEP2_32(CtxTy, Ctx, 0, i); };
        const unsigned W = K >= 3 ? K - 1 : 0, nvec = (W + 3) / 4;  // the window: K - 1 callers (K >= 3)
        LoadInst *LX = B.CreateLoad(I32, word(0), "at.ctx");
        nosan(LX);
        X = LX;
        Value *Y = nullptr;
        SmallVector<Value *, 2> vecs;
        if (K >= 2) {
          LoadInst *LY = B.CreateLoad(I32, word(1), "at.ctx.y");
          nosan(LY);
          Y = LY;
        }
        for (unsigned k = 0; k < nvec; ++k) {
          LoadInst *L = B.CreateAlignedLoad(V4, vecPtr(B, word(4 + 4 * k)), Align(16));
          nosan(L);
          vecs.push_back(L);
        }
        EntryAfter = &*B.GetInsertPoint();
        if (!calls.empty()) {
          // the callees' state, computed once at the entry
          Constant *Fid = B.getInt32(fid);
          Value *X2 = K == 0 ? B.CreateXor(X, Fid) : K == 1 ? static_cast<Value *>(Fid) : B.CreateXor(Y, Fid);
          Value *Y2 = nullptr;
          SmallVector<Value *, 2> vecs2;
          if (K == 2) {
            Y2 = Fid;
          } else if (K >= 3) {
            Value *Out = B.CreateExtractElement(vecs[(W - 1) / 4], uint64_t((W - 1) % 4), "at.ctx.out");
            Y2 = B.CreateXor(X2, Out);
            // shift one lane: new v[k] = <v[k-1][3], v[k][0], v[k][1], v[k][2]>, v[-1][3] = F
            Value *In = B.CreateInsertElement(PoisonValue::get(V4), Fid, uint64_t(3));
            for (unsigned k = 0; k < nvec; ++k)
              vecs2.push_back(B.CreateShuffleVector(vecs[k], k ? vecs[k - 1] : In, ArrayRef<int>{7, 0, 1, 2}));
          }
          EntryAfter = &*B.GetInsertPoint();
          auto store = [&](Instruction *Before, Value *SX, Value *SY, ArrayRef<Value *> SV) {
            IRBuilder<> S(Before);
            nosan(S.CreateStore(SX, S.CreateConstInBoundsGEP2_32(CtxTy, Ctx, 0, 0)));
            if (SY) nosan(S.CreateStore(SY, S.CreateConstInBoundsGEP2_32(CtxTy, Ctx, 0, 1)));
            for (unsigned k = 0; k < SV.size(); ++k)
              nosan(S.CreateAlignedStore(SV[k], vecPtr(S, S.CreateConstInBoundsGEP2_32(CtxTy, Ctx, 0, 4 + 4 * k)),
                                         Align(16)));
          };
          for (CallBase *CB : calls) store(CB, X2, Y2, vecs2);
          for (ReturnInst *R : rets) store(R, X, Y, vecs);
        }
      }
      for (auto &[BB, idx] : work) {
        const uint32_t cur = blockId(module, F.getName(), idx);
        Instruction *Before = BB == &F.getEntryBlock() && EntryAfter ? EntryAfter : &*BB->getFirstInsertionPt();
        IRBuilder<> B(Before);
        auto word = [&](unsigned i) { return B.CreateConstInBoundsGEP2_32(HistTy, Prev, 0, i); };
        Value *PrevWord = ngram ? word(0) : Prev;  // edge: prev; ngram: X
        LoadInst *P = B.CreateLoad(I32, PrevWord, "at.prev");
        P->setVolatile(true);
        nosan(P);
        auto invariant = [&](Type *T, unsigned field, const char *name) {
          LoadInst *L = B.CreateLoad(T, B.CreateStructGEP(AreaTy, Area, field), name);
          nosan(L);
          L->setMetadata(LLVMContext::MD_invariant_load, NoSan);
          return L;
        };
        LoadInst *Mask = indexed ? nullptr : invariant(I32, 1, "at.mask");
        Value *Key = B.CreateXor(P, B.getInt32(cur));
        if (X) Key = B.CreateXor(Key, X);  // ctx: the edge in the function's context
        Value *Idx, *H = nullptr;
        Instruction *Entry = nullptr, *IsNew = nullptr;
        if (indexed) {  // the index's entry of the key: slot + 1, 0 for a key not seen yet
          H = B.CreateAnd(Key, invariant(I32, 3, "at.imask"));
          LoadInst *Index = invariant(I32P, 2, "at.index");
          LoadInst *E = B.CreateLoad(I32, B.CreateGEP(I32, Index, B.CreateZExt(H, B.getInt64Ty())), "at.entry");
          nosan(E);
          Entry = E;
          IsNew = cast<Instruction>(B.CreateICmpEQ(E, B.getInt32(0)));
          Idx = E;  // the map is the counters - 1: map[slot + 1]
        } else {
          Idx = B.CreateAnd(Key, Mask);
        }
        LoadInst *Map = invariant(I8P, 0, "at.map");
        Value *Slot = B.CreateGEP(I8, Map, B.CreateZExt(Idx, B.getInt64Ty()));
        LoadInst *Old = B.CreateLoad(I8, Slot);
        nosan(Old);
        Value *Inc = B.CreateAdd(Old, B.getInt8(1));
        Inc = B.CreateAdd(Inc, B.CreateZExt(B.CreateICmpEQ(Inc, B.getInt8(0)), I8));  // NeverZero
        nosan(B.CreateStore(Inc, Slot));
        if (indexed) {  // a new key: the runtime assigns its slot (cold), then the count goes on as above
          Instruction *ThenTerm = SplitBlockAndInsertIfThen(IsNew, Map, false,
                                                            MDBuilder(C).createBranchWeights(1, 1 << 20));
          IRBuilder<> T(ThenTerm);
          CallInst *New = T.CreateCall(Assign, {H});
          New->setMetadata(NoSanKind, NoSan);
          BasicBlock *Tail = Map->getParent();  // begins with the map's load
          IRBuilder<> J(Tail, Tail->begin());  // a builder, not an Instruction * position (deprecated in LLVM 21)
          PHINode *Phi = J.CreatePHI(I32, 2, "at.slot1");
          Phi->addIncoming(Entry, Entry->getParent());
          Phi->addIncoming(New, ThenTerm->getParent());
          cast<Instruction>(cast<Instruction>(Slot)->getOperand(1))->setOperand(0, Phi);  // zext(slot + 1)
          B.SetInsertPoint(Before);  // the block's own code, now in the tail
        }
        Constant *Half = B.getInt32(cur >> 1);
        if (ngram <= 2) {  // edge, or ngram-2: the window is the previous block alone
          nosan(B.CreateStore(Half, PrevWord));
        } else {
          // the window's vectors, loaded whole; the block leaving it is lane (N-2) % 4 of vector (N-2) / 4
          const unsigned W = ngram - 1, nvec = (W + 3) / 4;
          SmallVector<Value *, 4> vecs;
          for (unsigned k = 0; k < nvec; ++k) {
            LoadInst *L = B.CreateAlignedLoad(V4, vecPtr(B, word(kWindowAt + 4 * k)), Align(16));
            nosan(L);
            vecs.push_back(L);
          }
          Value *Out = B.CreateExtractElement(vecs[(W - 1) / 4], uint64_t((W - 1) % 4), "at.out");
          // shift one lane: new v[k] = <v[k-1][3], v[k][0], v[k][1], v[k][2]>, v[-1][3] = cur >> 1
          Value *In = B.CreateInsertElement(PoisonValue::get(V4), Half, uint64_t(3));
          for (unsigned k = 0; k < nvec; ++k) {
            Value *Shifted = B.CreateShuffleVector(vecs[k], k ? vecs[k - 1] : In, ArrayRef<int>{7, 0, 1, 2});
            nosan(B.CreateAlignedStore(Shifted, vecPtr(B, word(kWindowAt + 4 * k)), Align(16)));
          }
          nosan(B.CreateStore(B.CreateXor(P, B.CreateXor(Out, Half)), word(0)));
        }
        ++blocks;
        if (debug)
          errs() << "[autotune-edges] " << module << " " << F.getName() << " " << idx << " "
                 << format_hex_no_prefix(cur, 8) << "\n";
      }
    }
    if (debug) {
      errs() << "[autotune-edges] " << module << ": " << blocks << " blocks instrumented";
      if (ngram) errs() << " (ngram-" << ngram << ")";
      if (mode.ctx) errs() << " (ctx, " << mode.callers() << " callers)";
      errs() << "\n";
    }
    if (!blocks && !mode.ctx) return PreservedAnalyses::all();
    // void autotune_edge_register(uint32_t blocks), autotune_ngram_register(uint32_t blocks, uint32_t n) or
    // autotune_ctx_register(uint32_t blocks, uint32_t k_plus_1), from a constructor of this module (a ctx
    // module registers even without blocks: its functions hand the context on)
    const char *reg = ngram ? "autotune_ngram_register" : mode.ctx ? "autotune_ctx_register" : "autotune_edge_register";
    FunctionCallee Reg = ngram || mode.ctx ? M.getOrInsertFunction(reg, Type::getVoidTy(C), I32, I32)
                                           : M.getOrInsertFunction(reg, Type::getVoidTy(C), I32);
    Function *Ctor = Function::Create(FunctionType::get(Type::getVoidTy(C), false), GlobalValue::InternalLinkage,
                                      ngram ? "autotune.ngram_ctor" : mode.ctx ? "autotune.ctx_ctor" : "autotune.edge_ctor",
                                      M);
    Ctor->addFnAttr(Attribute::NoUnwind);
    IRBuilder<> B(BasicBlock::Create(C, "", Ctor));
    if (ngram || mode.ctx)
      B.CreateCall(Reg, {B.getInt32(blocks), B.getInt32(ngram ? ngram : mode.ctx)});
    else
      B.CreateCall(Reg, {B.getInt32(blocks)});
    if (indexed) B.CreateCall(M.getOrInsertFunction("autotune_index_register", Type::getVoidTy(C)));
    B.CreateRetVoid();
    appendToGlobalCtors(M, Ctor, 2);
    return PreservedAnalyses::none();
  }
};

}  // namespace

// Where in the pipeline: where AFL++'s CLASSIC/NGRAM pass (afl-llvm-pass) runs, OptimizerLast up to
// LLVM 15 and OptimizerEarly from LLVM 16 on (AFL++ 5.02c under clang 21: right after
// rpo-function-attrs, `clang -mllvm -print-pipeline-passes`), so both count the blocks of one IR.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "autotune-edges", "2", [](PassBuilder &PB) {
#if LLVM_VERSION_MAJOR >= 16
            PB.registerOptimizerEarlyEPCallback(
#else
            PB.registerOptimizerLastEPCallback(
#endif
#if LLVM_VERSION_MAJOR >= 20
                [](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) { MPM.addPass(EdgeCoverage()); });
#else
                [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(EdgeCoverage()); });
#endif
          }};
}
