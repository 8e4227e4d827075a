import Strata
import Testing

/// Shares one lifecycle between threads, as a scope does.
private final class SharedLifecycle: Sendable {
  let lifecycle = ScopeLifecycle()
}

/// The scope lifecycle state machine on its own: open → closing → closed, one closer, and no
/// instance taken that no close will dispose.
@Suite struct ScopeLifecycleTests {
  // (`#expect` cannot take a non-copyable value apart, so each observation is bound first.)

  @Test func aScopeThatTookNothingClosesWithoutDisposing() {
    let lifecycle = ScopeLifecycle()
    let initial = lifecycle.state
    #expect(initial == .open)

    let start = lifecycle.beginClose()
    let whileClosing = lifecycle.state
    let hasBegun = lifecycle.hasBegunClosing
    let isClosedEarly = lifecycle.isFullyClosed
    #expect(start == .nothingToDispose)
    #expect(whileClosing == .closing)
    #expect(hasBegun)
    #expect(!isClosedEarly)

    lifecycle.finishClose()
    let final = lifecycle.state
    let isClosed = lifecycle.isFullyClosed
    #expect(final == .closed)
    #expect(isClosed)
  }

  @Test func onlyTheFirstCloseCloses() {
    let lifecycle = ScopeLifecycle()
    _ = lifecycle.beginClose()

    let second = lifecycle.beginClose()
    lifecycle.finishClose()
    let afterClosed = lifecycle.beginClose()

    #expect(second == .anotherCloseRuns)
    #expect(afterClosed == .anotherCloseRuns, "never back to open")
  }

  @Test func whatWasTakenOrLinkedIsDisposed() {
    let owning = ScopeLifecycle()
    let mayTake = owning.takeOwnership()
    let owningStart = owning.beginClose()
    #expect(mayTake)
    #expect(owningStart == .dispose)

    let linked = ScopeLifecycle()
    let mayLink = linked.requestLink()
    let linkedStart = linked.beginClose()
    let linkedRecorded = linked.everOwnedOrLinked
    #expect(mayLink)
    #expect(linkedStart == .dispose)
    #expect(linkedRecorded)

    let untouched = ScopeLifecycle()
    let untouchedRecorded = untouched.everOwnedOrLinked
    #expect(!untouchedRecorded)
  }

  @Test func nothingMayBeTakenOnceClosingBegan() {
    let lifecycle = ScopeLifecycle()
    _ = lifecycle.beginClose()

    let mayTake = lifecycle.takeOwnership()
    let mayLink = lifecycle.requestLink()

    #expect(!mayTake)
    #expect(!mayLink)
  }

  /// The race the ordering exists for: a thread taking an instance while another begins the
  /// close. Either the taker is refused, or the close sees that something was taken.
  @Test func aTakeRacingACloseIsRefusedOrSeen() async {
    for _ in 0..<300 {
      let shared = SharedLifecycle()
      let taken = Flag()
      let disposes = Flag()
      let finished = await runOnThreads(2) { thread in
        if thread == 0 {
          if shared.lifecycle.takeOwnership() { taken.raise() }
        } else if shared.lifecycle.beginClose() == .dispose {
          disposes.raise()
        }
      }
      #expect(finished)
      #expect(!taken.isRaised || disposes.isRaised, "an instance was taken that no close disposes")
    }
  }
}
