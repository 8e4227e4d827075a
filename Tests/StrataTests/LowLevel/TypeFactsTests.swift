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
