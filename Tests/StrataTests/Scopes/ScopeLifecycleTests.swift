import Strata
import Testing

/// Shares one lifecycle between threads, as a scope does.
private final class SharedLifecycle: Sendable {
  let lifecycle = ScopeLifecycle()
}

/// The scope lifecycle state machine on its own: open → closing → closed, one closer, and no
/// instance taken that no close will dispose.
@Suite struct ScopeLifecycleTests {
  @Test func aScopeThatTookNothingClosesWithoutDisposing() {
    let lifecycle = ScopeLifecycle()
    let observed1 = lifecycle.state
    #expect(observed1 == .open)

    let observed2 = lifecycle.beginClose()
    #expect(observed2 == .nothingToDispose)
    let observed3 = lifecycle.state
    #expect(observed3 == .closing)
    let observed4 = lifecycle.hasBegunClosing
    #expect(observed4)
    let observed5 = lifecycle.isFullyClosed
    #expect(!observed5)

    lifecycle.finishClose()
    let observed6 = lifecycle.state
    #expect(observed6 == .closed)
    let observed7 = lifecycle.isFullyClosed
    #expect(observed7)
  }

  @Test func onlyTheFirstCloseCloses() {
    let lifecycle = ScopeLifecycle()
    _ = lifecycle.beginClose()

    let observed8 = lifecycle.beginClose()
    #expect(observed8 == .anotherCloseRuns)
    lifecycle.finishClose()
    let observed9 = lifecycle.beginClose()
    #expect(observed9 == .anotherCloseRuns, "never back to open")
  }

  @Test func whatWasTakenOrLinkedIsDisposed() {
    let owning = ScopeLifecycle()
    let observed10 = owning.takeOwnership()
    #expect(observed10)
    let observed11 = owning.beginClose()
    #expect(observed11 == .dispose)

    let linked = ScopeLifecycle()
    let observed12 = linked.requestLink()
    #expect(observed12)
    let observed13 = linked.beginClose()
    #expect(observed13 == .dispose)
    let observed14 = linked.everAskedForLink
    #expect(observed14 && !linked.everTookSomething)
  }

  @Test func nothingMayBeTakenOnceClosingBegan() {
    let lifecycle = ScopeLifecycle()
    _ = lifecycle.beginClose()

    let observed15 = lifecycle.takeOwnership()
    #expect(!observed15)
    let observed16 = lifecycle.requestLink()
    #expect(!observed16)
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
