// The only C++ in the pass: LLVM's pass-plugin ABI is C++ (PassBuilder callbacks), so this shim
// registers one module pass at the chosen extension points and hands each module to the Rust
// implementation through the C API handle. Everything else lives in Rust.
#include "llvm-c/Types.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"

using namespace llvm;

// Implemented in Rust (src/plugin.rs). Returns true when the module changed.
extern "C" bool instrument_run_on_module(LLVMModuleRef M, int ExtensionPoint, int LtoPhase);

namespace {
enum ExtensionPoint { PipelineStart = 0, OptimizerLast = 1, Explicit = 2, FullLtoLast = 3 };

struct InstrumentPass : PassInfoMixin<InstrumentPass> {
    ExtensionPoint Where;
    ThinOrFullLTOPhase Phase;
    explicit InstrumentPass(ExtensionPoint W, ThinOrFullLTOPhase P = ThinOrFullLTOPhase::None)
        : Where(W), Phase(P) {}
    PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
        return instrument_run_on_module(wrap(&M), Where, static_cast<int>(Phase))
                   ? PreservedAnalyses::none()
                   : PreservedAnalyses::all();
    }
    // Probes must be inserted at -O0 and in optnone functions too.
    static bool isRequired() { return true; }
};
} // namespace

extern "C" void instrument_register_callbacks(PassBuilder &PB) {
    PB.registerPipelineStartEPCallback([](ModulePassManager &MPM, OptimizationLevel) {
        MPM.addPass(InstrumentPass(PipelineStart));
    });
    PB.registerOptimizerLastEPCallback(
        [](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase Phase) {
            MPM.addPass(InstrumentPass(OptimizerLast, Phase));
        });
    PB.registerFullLinkTimeOptimizationLastEPCallback(
        [](ModulePassManager &MPM, OptimizationLevel) {
            MPM.addPass(InstrumentPass(FullLtoLast));
        });
    PB.registerPipelineParsingCallback(
        [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
            if (Name != "instrument")
                return false;
            MPM.addPass(InstrumentPass(Explicit));
            return true;
        });
}

// Edge splitting for loop and call-site probes: LLVM's SplitEdge keeps PHI nodes, critical edges
// and duplicate switch edges right, which the C API cannot express. Returns the new block on the
// edge, or null when the edge cannot be split (an exception-handling edge).
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
extern "C" LLVMBasicBlockRef instrument_split_edge(LLVMBasicBlockRef From, LLVMBasicBlockRef To) {
    BasicBlock *F = unwrap(From), *T = unwrap(To);
    Instruction *Term = F->getTerminator();
    if (T->isEHPad() || !Term ||
        !(isa<BranchInst>(Term) || isa<SwitchInst>(Term) || isa<InvokeInst>(Term)))
        return nullptr;
    return wrap(SplitEdge(F, T));
}

// A routine's exit probe runs only when its entry probe opened something: LLVM's
// SplitBlockAndInsertIfThen splits the block before `At` and branches on `Opened != 0` to a new
// block, whose terminator it returns (the exit probe goes before it).
extern "C" LLVMValueRef instrument_guard_before(LLVMValueRef At, LLVMValueRef Opened) {
    auto *Before = cast<Instruction>(unwrap(At));
    Value *Token = unwrap(Opened);
    IRBuilder<> B(Before);
    Value *Cond = B.CreateICmpNE(Token, ConstantInt::get(Token->getType(), 0), "instrument.opened");
    return wrap(SplitBlockAndInsertIfThen(Cond, Before->getIterator(), false));
}

// The probes touch only the runtime's own memory (inaccessible to the module) and read their
// id slot (an argument): `memory(argmem: read, inaccessiblemem: readwrite)`, so loads and stores
// of the probed code may move across them as they would without probes, and alias analysis
// keeps the values it knew across a probe call.
extern "C" void instrument_mark_probe(LLVMValueRef Probe) {
    auto *F = cast<Function>(unwrap(Probe));
    F->setMemoryEffects(MemoryEffects::argMemOnly(ModRefInfo::Ref) |
                        MemoryEffects::inaccessibleMemOnly());
}

// A function that now calls probes does what they do: attributes inferred before late placement
// (memory(none), nosync, speculatable) would let later passes, LTO's among them, merge or drop
// its calls. Its memory effects gain the probes' (the runtime's memory, and reading the module's
// id slots, which are globals to it); nosync and speculatable go.
extern "C" void instrument_note_probed(LLVMValueRef Probed) {
    auto *F = cast<Function>(unwrap(Probed));
    MemoryEffects Known = F->getMemoryEffects();
    MemoryEffects Widened = Known | MemoryEffects::inaccessibleMemOnly() |
                            MemoryEffects(IRMemLocation::Other, ModRefInfo::Ref);
    if (Widened != Known)
        F->setMemoryEffects(Widened);
    F->removeFnAttr(Attribute::NoSync);
    F->removeFnAttr(Attribute::Speculatable);
}

// LLVM's demangler (Itanium C++ including C++20's forms, Rust v0, D, Microsoft), for the
// driver's reports: writes the readable name of `Mangled` into `Out` (at most `Size` bytes,
// NUL-terminated) and returns its full length; the name itself when it is not mangled.
#include "llvm/Demangle/Demangle.h"
#include <cstring>
extern "C" size_t instrument_llvm_demangle(const char *Mangled, char *Out, size_t Size) {
    std::string Text = llvm::demangle(std::string_view(Mangled));
    if (Size > 0) {
        size_t N = std::min(Text.size(), Size - 1);
        std::memcpy(Out, Text.data(), N);
        Out[N] = 0;
    }
    return Text.size();
}

// The inline count (instrument_contract::inline_count). `Abi` holds the contract's numbers:
// the records' offset in the state, the pending calls' in the thread-local block, the pending
// estimate's in the state, the record shift, counted and untimed-own offsets in a record, the
// inline and switched-off modes, the window end's offset in the state, the bare mode, the
// offsets of the bare window's calls left and of the record capacity in the thread-local block,
// the double mode and the bit that tells it from the detour mode, the shadow's sink words' offset
// in the state.
namespace {
enum AbiWord {
    RecordsAt,
    PendingCallsAt,
    PendingEstimateAt,
    RecordShift,
    CountedAt,
    UntimedOwnAt,
    ModeValue,
    OffValue,
    InlineEndAt,
    BareValue,
    WindowLeftAt,
    ThreadCapAt,
    DoubleValue,
    DoubleBit,
    ShadowSinkAt
};

// The blocks of an inline count built by `buildCount`, their terminators left to the caller
// (but `Detour`'s): `Fast` has counted the call; `Other` is where an event in the table but
// neither switched off nor counted inline goes, `ModeByte` its mode; `Detour` is where the
// modes `DETOUR` and `DOUBLE` go from there (`branchToDetour`), to count inline after it;
// `OffFrom` is the block that branched a switched-off event's call on.
struct Counting {
    BasicBlock *Fast, *Other, *Detour;
    Value *ModeByte;
    BasicBlock *OffFrom;
};

// Whether the mode byte `Mode` is the contract's mode `Word` (one of `Abi`'s mode values).
Value *isMode(IRBuilder<> &B, Value *Mode, const uint64_t *Abi, AbiWord Word) {
    return B.CreateICmpEQ(Mode, B.getInt8(static_cast<uint8_t>(Abi[Word])));
}

// Ends `Check` (no terminator) with the test of the modes `DETOUR` and `DOUBLE` (one compare
// of the mode with `DOUBLE`'s own bit set): to `C.Detour`, weighed not to be taken, else to
// `Else`.
void branchToDetour(BasicBlock *Check, const Counting &C, BasicBlock *Else, const uint64_t *Abi) {
    IRBuilder<> B(Check);
    Value *Either = B.CreateOr(C.ModeByte, B.getInt8(static_cast<uint8_t>(Abi[DoubleBit])));
    Value *Detoured = isMode(B, Either, Abi, DoubleValue);
    B.CreateCondBr(Detoured, C.Detour, Else,
                   MDBuilder(Check->getContext()).createUnlikelyBranchWeights());
}

// A load of `Bytes` from `From`. The runtime writes the mode and estimate tables from any
// thread: those loads are atomic (`Shared`, plain moves on x86-64). The state and its records
// are the calling thread's.
LoadInst *loadWord(IRBuilder<> &B, Type *Ty, Value *From, unsigned Bytes, bool Shared = false) {
    LoadInst *L = B.CreateAlignedLoad(Ty, From, Align(Bytes));
    if (Shared)
        L->setAtomic(AtomicOrdering::Monotonic);
    return L;
}

// The first check's words at `B`: the id in `Slot`, the thread-local block, and whether the id
// is below the record capacity the block holds (volatile loads for the shadow).
struct IdCheck {
    Value *Id, *Block, *Below;
};
IdCheck checkId(IRBuilder<> &B, Value *Slot, Value *Thread, const uint64_t *Abi, bool Volatile) {
    Value *Id = B.CreateAlignedLoad(B.getInt32Ty(), Slot, Align(4), Volatile);
    Value *Block = B.CreateThreadLocalAddress(Thread);
    Value *CapWord = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Block, Abi[ThreadCapAt]);
    Value *Cap = B.CreateAlignedLoad(B.getInt32Ty(), CapWord, Align(4), Volatile);
    return {Id, Block, B.CreateICmpULT(Id, Cap)};
}

// The last check's words at `B`: the state (from the thread-local `Block`), the event's record
// (`Index`), its count word and count, and whether the count is not where the runtime ends a
// window of inline counts (volatile loads for the shadow).
struct RecordCheck {
    Value *Block, *State, *Record, *CountedWord, *Counted, *NotEnd;
};
RecordCheck checkEnd(IRBuilder<> &B, Value *Block, Value *Index, const uint64_t *Abi,
                     bool Volatile) {
    Type *I8 = B.getInt8Ty(), *I64 = B.getInt64Ty(), *Ptr = B.getPtrTy();
    auto At = [&](Value *Base, uint64_t Offset) {
        return B.CreateConstInBoundsGEP1_64(I8, Base, Offset);
    };
    auto Load = [&](Type *Ty, Value *From) {
        return B.CreateAlignedLoad(Ty, From, Align(8), Volatile);
    };
    Value *State = Load(Ptr, Block);
    Value *Records = Load(Ptr, At(State, Abi[RecordsAt]));
    Value *Record = B.CreateInBoundsGEP(I8, Records, B.CreateShl(Index, Abi[RecordShift]));
    Value *CountedWord = At(Record, Abi[CountedAt]);
    Value *Counted = Load(I64, CountedWord);
    Value *End = Load(I64, At(State, Abi[InlineEndAt]));
    return {Block, State, Record, CountedWord, Counted, B.CreateICmpNE(Counted, End)};
}

// The count's four read-modify-writes at `B`, on the words `E` found: 1 to the record's count,
// the event's estimate (`PerCall[Index]`) to the record's untimed own time, 1 to the block's
// pending calls and the estimate to the state's pending estimate. With a `Zero` (the shadow's: an
// empty inline asm's result, which the compiler cannot see through) every access is volatile, each
// adds that zero instead, the estimate and-ed with it, and each sum goes to one of the state's
// sink words (`ShadowSinkAt`), so that the shadow changes nothing and the count after it loads
// nothing the shadow stored; without, the estimate's load is atomic (the runtime writes the table
// from any thread).
void readModifyWrites(IRBuilder<> &B, const RecordCheck &E, Value *PerCall, Value *Index,
                      const uint64_t *Abi, Value *Zero = nullptr) {
    Type *I8 = B.getInt8Ty(), *I64 = B.getInt64Ty();
    bool Shadow = Zero != nullptr;
    auto At = [&](Value *Base, uint64_t Offset) {
        return B.CreateConstInBoundsGEP1_64(I8, Base, Offset);
    };
    auto Load = [&](Value *From, bool Shared) {
        LoadInst *L = loadWord(B, I64, From, 8, Shared && !Shadow);
        L->setVolatile(Shadow);
        return L;
    };
    unsigned Sunk = 0;
    auto Store = [&](Value *Value, llvm::Value *Word) {
        if (Shadow)
            Word = At(E.State, Abi[ShadowSinkAt] + 8 * Sunk++);
        B.CreateAlignedStore(Value, Word, Align(8), Shadow);
    };
    auto Add = [&](Value *Word, Value *Amount) {
        Store(B.CreateAdd(Load(Word, false), Amount), Word);
    };
    Value *One = Shadow ? Zero : B.getInt64(1);
    Value *Estimate = Load(B.CreateInBoundsGEP(I64, PerCall, Index), true);
    if (Shadow)
        Estimate = B.CreateAnd(Estimate, Zero);
    Store(B.CreateAdd(E.Counted, One), E.CountedWord);
    Add(At(E.Record, Abi[UntimedOwnAt]), Estimate);
    Add(At(E.Block, Abi[PendingCallsAt]), One);
    Add(At(E.State, Abi[PendingEstimateAt]), Estimate);
}

// The shadow of the inline count that mode `DOUBLE` runs before the count itself: the same
// checks (each a compare and a branch, weighed to pass) and the same four loads and adds of the
// same words, every access volatile so that none is merged with the count's own, each adding an
// opaque zero and storing to a sink word of the state (`readModifyWrites`), so that it changes
// nothing and adds no store-to-load wait to the count after it. What its windows cost
// over detour ones is what one more inline count costs where the routine runs (the runtime's
// inplace). Returns its first block, which ends at `Next`; new blocks go
// before `Before`.
BasicBlock *buildShadow(Function *F, BasicBlock *Before, BasicBlock *Next, Value *Slot,
                        Value *Index, Value *Thread, Value *Modes, Value *PerCall,
                        const uint64_t *Abi) {
    LLVMContext &Ctx = F->getContext();
    BasicBlock *Ids = BasicBlock::Create(Ctx, "instrument.shadow", F, Before);
    BasicBlock *OffCheck = BasicBlock::Create(Ctx, "instrument.shadow.off", F, Before);
    BasicBlock *ModeCheck = BasicBlock::Create(Ctx, "instrument.shadow.mode", F, Before);
    BasicBlock *EndBlock = BasicBlock::Create(Ctx, "instrument.shadow.end", F, Before);
    BasicBlock *Count = BasicBlock::Create(Ctx, "instrument.shadow.count", F, Before);
    // Never taken while the mode holds; it loads, so that no branch to it folds away.
    BasicBlock *Fail = BasicBlock::Create(Ctx, "instrument.shadow.fail", F, Before);
    IRBuilder<> B(Ids);
    MDNode *Likely = MDBuilder(Ctx).createLikelyBranchWeights();
    IdCheck Checked = checkId(B, Slot, Thread, Abi, true);
    B.CreateCondBr(Checked.Below, OffCheck, Fail, Likely);

    // The count's own index addresses the rest (the same value): a second one live through
    // the shadow would take a register the routine saves at its entry for every call.
    B.SetInsertPoint(OffCheck);
    Value *ModeWord = B.CreateInBoundsGEP(B.getInt8Ty(), Modes, Index);
    Value *ModeByte = B.CreateAlignedLoad(B.getInt8Ty(), ModeWord, Align(1), true);
    B.CreateCondBr(isMode(B, ModeByte, Abi, OffValue), Fail, ModeCheck,
                   MDBuilder(Ctx).createUnlikelyBranchWeights());
    B.SetInsertPoint(ModeCheck);
    Value *Double = isMode(B, ModeByte, Abi, DoubleValue);
    B.CreateCondBr(Double, EndBlock, Fail, Likely);

    B.SetInsertPoint(EndBlock);
    RecordCheck E = checkEnd(B, Checked.Block, Index, Abi, true);
    B.CreateCondBr(E.NotEnd, Count, Fail, Likely);

    B.SetInsertPoint(Count);
    Type *I64 = B.getInt64Ty();
    InlineAsm *Opaque = InlineAsm::get(FunctionType::get(I64, {I64}, false), "", "=r,0", false);
    readModifyWrites(B, E, PerCall, Index, Abi, B.CreateCall(Opaque, {B.getInt64(0)}));
    B.CreateBr(Next);

    B.SetInsertPoint(Fail);
    B.CreateAlignedLoad(B.getInt32Ty(), Slot, Align(4), true);
    B.CreateBr(Next);
    return Ids;
}

// The inline count's checks at the end of `Head` (which has no terminator): the id below the
// record capacity in the thread-local block (zero without a state, never above the mode table's
// length: one test for the id, the state and the record), the mode, and the record's count not
// where the runtime ends a window of inline counts, in that order, each failing to `Slow` (the
// mode to `Off` when it is `OFF`, else to `Other`); where all hold, `Fast` counts the call. New
// blocks go before `Before`.
//
// The mode `OFF` is tested first, weighed not to be taken, so that a switched-off call jumps
// over the count to `Off` near by (a routine's own code) and every other one falls on: tested
// after the inline count's mode it took two jumps, out of the count's way and back. A
// switched-off call of Lua's interpreter cost 0.79 ns over the plain code that way and 0.69
// this way (three interleaved runs of `scripts/nas-paired --truth all`, 4 to 6 processes
// each), the inline count's path as dear either way (issue 23's session-55 note).
Counting buildCount(BasicBlock *Head, BasicBlock *Before, Value *Slot, BasicBlock *Slow,
                    BasicBlock *Off, Value *Thread, Value *Modes, Value *PerCall,
                    const uint64_t *Abi) {
    Function *F = Head->getParent();
    LLVMContext &Ctx = F->getContext();
    BasicBlock *ModeCheck = BasicBlock::Create(Ctx, "instrument.count.mode", F, Before);
    BasicBlock *EndCheck = BasicBlock::Create(Ctx, "instrument.count.end", F, Before);
    BasicBlock *Fast = BasicBlock::Create(Ctx, "instrument.count", F, Before);
    BasicBlock *Other = BasicBlock::Create(Ctx, "instrument.count.other", F, Before);

    IRBuilder<> B(Head);
    Type *I8 = B.getInt8Ty(), *I64 = B.getInt64Ty();
    // Every check is weighed to pass, so that the count falls through to the routine's own
    // code and the paths that call the probe or count barely are laid out of its way.
    MDNode *Likely = MDBuilder(Ctx).createLikelyBranchWeights();
    IdCheck Ids = checkId(B, Slot, Thread, Abi, false);
    B.CreateCondBr(Ids.Below, ModeCheck, Slow, Likely);

    B.SetInsertPoint(ModeCheck);
    Value *Index = B.CreateZExt(Ids.Id, I64);
    Value *ModeByte = loadWord(B, I8, B.CreateInBoundsGEP(I8, Modes, Index), 1, true);
    BasicBlock *InlineCheck = BasicBlock::Create(Ctx, "instrument.count.inline", F, Before);
    B.CreateCondBr(isMode(B, ModeByte, Abi, OffValue), Off, InlineCheck,
                   MDBuilder(Ctx).createUnlikelyBranchWeights());
    B.SetInsertPoint(InlineCheck);
    Value *Inline = isMode(B, ModeByte, Abi, ModeValue);
    B.CreateCondBr(Inline, EndCheck, Other, Likely);

    // Modes `DETOUR` and `DOUBLE` (the runtime's windows that measure an inline count in
    // place), from the callers' `branchToDetour`: both reach the count by the same branches,
    // and `DOUBLE` runs the shadow on the way.
    BasicBlock *Detour = BasicBlock::Create(Ctx, "instrument.count.detour", F, Before);
    BasicBlock *Shadow = buildShadow(F, Before, EndCheck, Slot, Index, Thread, Modes, PerCall, Abi);
    B.SetInsertPoint(Detour);
    Value *Double = isMode(B, ModeByte, Abi, DoubleValue);
    B.CreateCondBr(Double, Shadow, EndCheck, Likely);

    // The runtime's window of inline counts ends at the call that finds this count: the probe
    // then counts it and measures the window.
    B.SetInsertPoint(EndCheck);
    RecordCheck E = checkEnd(B, Ids.Block, Index, Abi, false);
    B.CreateCondBr(E.NotEnd, Fast, Slow, Likely);

    B.SetInsertPoint(Fast);
    readModifyWrites(B, E, PerCall, Index, Abi);
    // The routine now writes the runtime's globals itself.
    F->setMemoryEffects(F->getMemoryEffects() |
                        MemoryEffects(IRMemLocation::Other, ModRefInfo::ModRef));
    return {Fast, Other, Detour, ModeByte, ModeCheck};
}

// The bare count at the end of `Check` (which has no terminator), for a mode byte that is not
// the inline count's, on a thread with a state (`buildCount`'s first test): the mode `BARE` and
// the bare window's calls left above zero, each failing to `Slow`; where both hold, one call
// fewer left and one more pending, then on to `Done`. Both words are the thread-local block's,
// which the thread pointer addresses directly: no pointer is loaded. Returns the block that
// counted; new blocks go before `Before`.
BasicBlock *buildBare(BasicBlock *Check, BasicBlock *Before, Value *ModeByte, BasicBlock *Slow,
                      BasicBlock *Done, Value *Thread, const uint64_t *Abi) {
    Function *F = Check->getParent();
    LLVMContext &Ctx = F->getContext();
    BasicBlock *LeftCheck = BasicBlock::Create(Ctx, "instrument.bare.left", F, Before);
    BasicBlock *Fast = BasicBlock::Create(Ctx, "instrument.bare", F, Before);
    IRBuilder<> B(Check);
    Type *I8 = B.getInt8Ty(), *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
    Value *Bare = isMode(B, ModeByte, Abi, BareValue);
    B.CreateCondBr(Bare, LeftCheck, Slow);

    B.SetInsertPoint(LeftCheck);
    Value *Block = B.CreateThreadLocalAddress(Thread);
    Value *LeftWord = B.CreateConstInBoundsGEP1_64(I8, Block, Abi[WindowLeftAt]);
    Value *Left = loadWord(B, I32, LeftWord, 4);
    B.CreateCondBr(B.CreateIsNotNull(Left), Fast, Slow);

    B.SetInsertPoint(Fast);
    B.CreateAlignedStore(B.CreateSub(Left, B.getInt32(1)), LeftWord, Align(4));
    Value *Pending = B.CreateConstInBoundsGEP1_64(I8, Block, Abi[PendingCallsAt]);
    B.CreateAlignedStore(B.CreateAdd(loadWord(B, I64, Pending, 8), B.getInt64(1)), Pending,
                         Align(8));
    B.CreateBr(Done);
    return Fast;
}
} // namespace

// The inline count around the entry probe call `EnterCall`: where its checks hold, the entry
// counts the call itself in a block of its own, and its result is zero; a measured event calls
// `EnterMeasured`, a switched-off one nothing. Returns the phi that replaces the call's result.
extern "C" LLVMValueRef instrument_inline_count(LLVMValueRef EnterCall, LLVMValueRef Thread,
                                                LLVMValueRef Modes, LLVMValueRef PerCall,
                                                LLVMValueRef EnterMeasured, const uint64_t *Abi) {
    auto *Call = cast<CallInst>(unwrap(EnterCall));
    Value *Slot = Call->getArgOperand(0);
    BasicBlock *Head = Call->getParent();
    Function *F = Head->getParent();
    LLVMContext &Ctx = F->getContext();
    BasicBlock *Slow = Head->splitBasicBlock(Call->getIterator(), "instrument.count.call");
    BasicBlock *Join =
        Slow->splitBasicBlock(std::next(Call->getIterator()), "instrument.count.join");
    Head->getTerminator()->eraseFromParent();
    Counting C = buildCount(Head, Slow, Slot, Slow, Join, unwrap(Thread), unwrap(Modes),
                            unwrap(PerCall), Abi);
    IRBuilder<> B(C.Fast);
    B.CreateBr(Join);

    // A measured event goes straight to the timed entry: its mode is read already. (A
    // switched-off one made no call at all: `buildCount` sent it to `Join`, its entry's result
    // zero, as the probe's is.)
    BasicBlock *Measured = BasicBlock::Create(Ctx, "instrument.count.measured", F, Slow);
    BasicBlock *DetourCheck = BasicBlock::Create(Ctx, "instrument.count.detoured", F, Slow);
    BasicBlock *BareCheck = BasicBlock::Create(Ctx, "instrument.bare.mode", F, Slow);
    B.SetInsertPoint(C.Other);
    B.CreateCondBr(B.CreateICmpEQ(C.ModeByte, B.getInt8(0)), Measured, DetourCheck);
    branchToDetour(DetourCheck, C, BareCheck, Abi);
    BasicBlock *Bare = buildBare(BareCheck, Slow, C.ModeByte, Slow, Join, unwrap(Thread), Abi);
    B.SetInsertPoint(Measured);
    CallInst *Timed = B.CreateCall(cast<Function>(unwrap(EnterMeasured)), {Slot});
    Timed->setCallingConv(Call->getCallingConv());
    Timed->setTailCallKind(CallInst::TCK_NoTail);
    B.CreateBr(Join);

    B.SetInsertPoint(Join, Join->begin());
    PHINode *Opened = B.CreatePHI(Call->getType(), 5, "instrument.opened");
    Call->replaceAllUsesWith(Opened);
    Opened->addIncoming(Call, Slow);
    Opened->addIncoming(Timed, Measured);
    Opened->addIncoming(ConstantInt::get(Call->getType(), 0), C.Fast);
    Opened->addIncoming(ConstantInt::get(Call->getType(), 0), C.OffFrom);
    Opened->addIncoming(ConstantInt::get(Call->getType(), 0), Bare);
    return wrap(Opened);
}

// Code duplication (Arnold and Ryder): a copy of `Fn` made before any probe goes in, renamed
// `Fn` + `Suffix`, internal and never inlined, for the probes; `Fn` keeps its own code behind a
// dispatch (instrument_dispatch). Null where a tail call cannot forward the arguments as they
// came (varargs, byval, inalloca, preallocated or swifterror parameters) or a block's address
// is taken (the copy's would differ from the routine's).
extern "C" LLVMValueRef instrument_probed_copy(LLVMValueRef Fn, const char *Suffix) {
    Function *F = cast<Function>(unwrap(Fn));
    if (F->isVarArg() || F->isPresplitCoroutine())
        return nullptr;
    for (Argument &A : F->args())
        if (A.hasByValAttr() || A.hasInAllocaAttr() || A.hasPreallocatedAttr() ||
            A.hasSwiftErrorAttr())
            return nullptr;
    for (BasicBlock &BB : *F)
        if (BB.hasAddressTaken())
            return nullptr;
    ValueToValueMapTy Map;
    Function *Copy = CloneFunction(F, Map);
    Copy->setName(F->getName() + Suffix);
    Copy->setLinkage(GlobalValue::InternalLinkage);
    Copy->setVisibility(GlobalValue::DefaultVisibility);
    Copy->setDLLStorageClass(GlobalValue::DefaultStorageClass);
    // Inlined back into the routine (its one caller) it would make the routine probed again.
    Copy->removeFnAttr(Attribute::AlwaysInline);
    Copy->addFnAttr(Attribute::NoInline);
    if (Comdat *Group = F->getComdat())
        Copy->setComdat(Group);
    // Next to the routine in the object file, for the instruction cache.
    Copy->removeFromParent();
    F->getParent()->getFunctionList().insertAfter(F->getIterator(), Copy);
    return wrap(Copy);
}

// The routine `Fn`'s dispatch at its entry (after its allocas): the inline count's checks
// (`buildCount` on the id in `Slot`), calls counted inline or barely (`buildBare`) and
// switched-off ones running on into the routine's own code, every other one (measured,
// tallied, counted through the probe) a `musttail` call of `Probed` (its probed copy) with the
// routine's own arguments.
extern "C" void instrument_dispatch(LLVMValueRef Fn, LLVMValueRef Probed, LLVMValueRef Slot,
                                    LLVMValueRef Thread, LLVMValueRef Modes, LLVMValueRef PerCall,
                                    const uint64_t *Abi) {
    Function *F = cast<Function>(unwrap(Fn));
    Function *Copy = cast<Function>(unwrap(Probed));
    BasicBlock *Head = &F->getEntryBlock();
    BasicBlock::iterator At = Head->begin();
    while (isa<AllocaInst>(*At))
        ++At;
    BasicBlock *Body = Head->splitBasicBlock(At, "instrument.own");
    Head->getTerminator()->eraseFromParent();

    BasicBlock *ToProbed = BasicBlock::Create(F->getContext(), "instrument.probed", F, Body);
    IRBuilder<> B(ToProbed);
    SmallVector<Value *, 8> Args;
    for (Argument &A : F->args())
        Args.push_back(&A);
    CallInst *Call = B.CreateCall(Copy, Args);
    Call->setCallingConv(Copy->getCallingConv());
    // musttail needs the ABI attributes of the routine's parameters and result on the call.
    AttributeList Own = F->getAttributes();
    SmallVector<AttributeSet, 8> Params;
    for (unsigned I = 0; I < F->arg_size(); I++)
        Params.push_back(Own.getParamAttrs(I));
    Call->setAttributes(
        AttributeList::get(F->getContext(), AttributeSet(), Own.getRetAttrs(), Params));
    Call->setTailCallKind(CallInst::TCK_MustTail);
    // A call of a function with debug information needs a location in a function that has some.
    if (DISubprogram *Scope = F->getSubprogram())
        Call->setDebugLoc(DILocation::get(F->getContext(), Scope->getLine(), 0, Scope));
    if (F->getReturnType()->isVoidTy())
        B.CreateRetVoid();
    else
        B.CreateRet(Call);

    Counting C = buildCount(Head, ToProbed, unwrap(Slot), ToProbed, Body, unwrap(Thread),
                            unwrap(Modes), unwrap(PerCall), Abi);
    B.SetInsertPoint(C.Fast);
    B.CreateBr(Body);
    BasicBlock *BareCheck =
        BasicBlock::Create(F->getContext(), "instrument.bare.mode", F, ToProbed);
    branchToDetour(C.Other, C, BareCheck, Abi);
    buildBare(BareCheck, ToProbed, C.ModeByte, ToProbed, Body, unwrap(Thread), Abi);
}
