import Strata
import Testing

/// An object whose lifetime the tests watch through a weak reference.
private final class Payload: Sendable {
  init() {}
}

extension LowLevel {
  /// `InlineSlots`, the lock-free table behind a scope's first scoped instances, on its own: each
  /// retain it takes is given back exactly once, a slot has one creator, and tags keep their order.
  @Suite struct InlineSlotsTests {
    private static let id: UInt = 0x1000
    private static let otherID: UInt = 0x2000

    @Test func aPublishedInstanceIsReadWithoutARetainAndReleasedOnce() {
      let slots = InlineSlots()
      weak var watched: Payload?
      do {
        let payload = Payload()
        watched = payload
        #expect(slots.claim(0, from: 0, for: Self.id, thread: 7).claimed)
        #expect(slots.creator(0) == 7)
        slots.provision(0, payload)
        slots.publish(0, for: Self.id)
      }
      #expect(slots.tag(0) == Self.id | InlineSlot.ready)
      #expect(slots.creator(0) == 0)
      #expect(watched != nil, "the slot holds its retain")
      #expect(slots.withInstance(0) { $0 === watched } == true)

      slots.releaseAll()

      #expect(watched == nil, "releasing the slots gave the retain back")
      #expect(slots.withInstance(0) { _ in true } == nil)
    }

    @Test func takingAnInstanceHandsOverTheSlotsRetain() {
      let slots = InlineSlots()
      weak var watched: Payload?
      var taken: AnyObject?
      do {
        let payload = Payload()
        watched = payload
        _ = slots.claim(0, from: 0, for: Self.id, thread: 1)
        slots.provision(0, payload)
        slots.publish(0, for: Self.id)
        taken = slots.takeInstance(0)
      }
      #expect(watched != nil)
      #expect(slots.takeInstance(0) == nil, "taken once only")
      slots.releaseAll()
      #expect(watched != nil, "releaseAll does not release what was taken")
      taken = nil
      #expect(watched == nil)
      _ = taken
    }

    @Test func aVacatedSlotReleasesItsInstanceAndCanBeClaimedAgain() {
      let slots = InlineSlots()
      weak var watched: Payload?
      do {
        let payload = Payload()
        watched = payload
        _ = slots.claim(0, from: 0, for: Self.id, thread: 3)
        slots.provision(0, payload)
      }
      slots.vacate(0, for: Self.id)

      #expect(watched == nil)
      #expect(slots.tag(0) == Self.id | InlineSlot.vacant)
      #expect(
        !slots.claim(0, from: 0, for: Self.otherID, thread: 4).claimed, "the slot stays its registration's")
      #expect(slots.claim(0, from: Self.id | InlineSlot.vacant, for: Self.id, thread: 4).claimed)
      #expect(slots.creator(0) == 4)
    }

    @Test func aFailedClaimReportsTheTagFound() {
      let slots = InlineSlots()
      _ = slots.claim(1, from: 0, for: Self.id, thread: 1)

      let second = slots.claim(1, from: 0, for: Self.otherID, thread: 2)

      #expect(!second.claimed)
      #expect(second.found == Self.id | InlineSlot.creating)
      #expect(slots.creator(1) == 1)
    }

    @Test func valuesAreBoxedAndComeBackUnchanged() {
      let slots = InlineSlots()
      // Slots are tagged in order (releaseAll stops at the first untagged one): 0 and 1 first.
      for earlier in 0..<2 { _ = slots.claim(earlier, from: 0, for: Self.otherID, thread: 1) }
      _ = slots.claim(2, from: 0, for: Self.id, thread: 1)
      slots.provision(2, ObjectBox.box("a value of \(40 + 2) characters, kept in a box"))
      slots.publish(2, for: Self.id)

      let read = slots.withInstance(2) { ObjectBox.unbox($0, as: String.self) }

      #expect(read == "a value of 42 characters, kept in a box")
      slots.releaseAll()
    }

    @Test func exactlyOneOfManyRacingThreadsClaimsASlot() async {
      for _ in 0..<100 {
        let holder = SlotsHolder()
        let winners = Counter()
        let finished = await runOnThreads(4) { thread in
          if holder.slots.claim(0, from: 0, for: Self.id, thread: UInt(thread + 1)).claimed {
            winners.increment()
          }
        }
        #expect(finished)
        #expect(winners.value == 1)
        #expect((1...4).contains(holder.slots.creator(0)))
      }
    }
  }
}

/// Slots shared by several threads, as a scope shares its own.
private final class SlotsHolder: Sendable {
  let slots = InlineSlots()
}
