import Foundation
import Testing

@testable import Strata

/// Types to ask about: more of them than `TypeFacts`' lock-free table has words, built from the
/// bits of a number (`Bit0<Bit1<…<Leaf>>>`), so that answers must survive being evicted.
private protocol FactProbe: SendableMetatype {}
private struct Leaf: FactProbe {}
private struct Bit0<Next: FactProbe>: FactProbe {}
private struct Bit1<Next: FactProbe>: FactProbe {}

private func probeType(_ number: Int, bits: Int) -> any FactProbe.Type {
  func wrap<Next: FactProbe>(_: Next.Type, _ bit: Int) -> any FactProbe.Type {
    bit == 0 ? Bit0<Next>.self : Bit1<Next>.self
  }
  var type: any FactProbe.Type = Leaf.self
  for bit in 0..<bits { type = wrap(type, (number >> bit) & 1) }
  return type
}

extension LowLevel {
  /// `AtomicWordTable` and `TypeFacts`: each type's fact computed once, never another type's.
  @Suite struct TypeFactsTests {
    @Test func anAtomicWordTableKeepsTheLastWordStoredForAKey() {
      let table = AtomicWordTable(minimumCount: 16)
      #expect(table.load(for: 0x1000) == 0)
      table.store(0x1001, for: 0x1000)
      #expect(table.load(for: 0x1000) == 0x1001)
      table.store(0x1002, for: 0x1000)
      #expect(table.load(for: 0x1000) == 0x1002)
    }

    @Test func aGrownTableHoldsTheEntriesItWasGivenAndTakesNewOnes() {
      let table = AtomicWordTable(minimumCount: 16)
      #expect(table.count == 16)
      table.store(0x7000_0001, for: 0x7000_0000)
      let entries = (1...500).map { (key: UInt($0) << 4, word: UInt($0) << 4 | 1) }
      table.grow(toAtLeast: 1_000, entries: entries)
      #expect(table.count == 1_024)
      // Each key's word is the last entry stored there: its own, or another's sharing the word
      // (a direct-mapped table of 1,024 words keeps about four in five of 500 keys).
      let words = Set(entries.map(\.word))
      var kept = 0
      for (key, word) in entries {
        let found = table.load(for: key)
        #expect(words.contains(found), "key \(key) found \(found)")
        if found == word { kept += 1 }
      }
      #expect(kept > 350)
      // What was stored before and not handed over is gone, as if evicted: the owner refills.
      #expect(table.load(for: 0x7000_0000) & ~0xF != 0x7000_0000)
      table.store(0x7100_0001, for: 0x7100_0000)
      #expect(table.load(for: 0x7100_0000) == 0x7100_0001)
      // Growing to a size it has already changes nothing.
      table.grow(toAtLeast: 512, entries: [])
      #expect(table.count == 1_024)
      #expect(table.load(for: 0x7100_0000) == 0x7100_0001)
    }

    @Test func readersAndWritersRacingAGrowingTableSeeOnlyWordsStoredForTheirKeys() async {
      let table = AtomicWordTable(minimumCount: 2)
      let wrong = Counter()
      let rounds = Sanitizers.threadSanitizerIsActive ? 200 : 5_000
      let finished = await runOnThreads(3) { thread in
        if thread == 0 {
          // The owner's side: one grower (TypeFacts grows under its lock).
          var size = 2
          for _ in 0..<16 {
            size *= 2
            table.grow(
              toAtLeast: size, entries: (1...64).map { (key: UInt($0) << 3, word: UInt($0) << 3 | 2) })
          }
          return
        }
        for round in 0..<rounds {
          let key = UInt(round % 64 + 1) << 3
          table.store(key | 2, for: key)
          let word = table.load(for: key)
          // 0 (evicted, or stored into a block just replaced), or some key's word, never torn.
          if word != 0 && word & 7 != 2 { wrong.increment() }
        }
      }
      #expect(finished)
      #expect(wrong.value == 0)
      #expect(table.count == 1 << 17)
    }

    @Test func eachTypeIsComputedOnceEvenWithMoreTypesThanTheTableHoldsWords() {
      let facts = TypeFacts()
      let types = (0..<(1 << 13)).map { probeType($0, bits: 13) }  // 8,192 types
      let computed = Counter()
      for round in 0..<3 {
        for (number, type) in types.enumerated() {
          let fact = facts.fact(for: type) {
            computed.increment()
            return UInt(number % 7 + 1)
          }
          #expect(fact == UInt(number % 7 + 1), "type \(number), round \(round)")
        }
      }
      #expect(computed.value == types.count)
    }

    @Test func threadsAskingAboutTheSameTypesAllGetEachTypesOwnFact() async {
      let facts = TypeFacts()
      let types = (0..<(1 << 10)).map { probeType($0, bits: 10) }
      let wrong = Counter()
      let rounds = Sanitizers.threadSanitizerIsActive ? 2 : 20
      let finished = await runOnThreads(4) { thread in
        for _ in 0..<rounds {
          for (number, type) in types.enumerated().reversed() where number % 4 != thread {
            if facts.fact(for: type, compute: { UInt(number % 7 + 1) }) != UInt(number % 7 + 1) {
              wrong.increment()
            }
          }
        }
      }
      #expect(finished)
      #expect(wrong.value == 0)
    }
  }
}
