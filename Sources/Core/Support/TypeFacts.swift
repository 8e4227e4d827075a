/// One small fact per type (a number from 1 to 7), remembered for the whole process: what a
/// failing conformance cast would otherwise compute again each time.
///
/// On Linux a conformance cast that fails scans every conformance record of the process, and the
/// runtime does not remember the failure: tens of thousands of instructions, each time. Strata asks
/// such questions for every instance a singleton or scope makes (is it `Disposable`?) and for
/// every dependency it records (is it a `Lazy`?), so it asks the runtime once per type and keeps
/// the answer here.
///
/// A type is known by its metadata address: metadata is never freed, so an address names one type
/// for the life of the process. The recent answers sit in a table of atomic words read without a
/// lock (the address with the fact in its low bits; two types may share a word, and the later
/// evicts the earlier); every answer is also kept in a dictionary under a lock, so a type evicted
/// is still asked about once only. The table grows to keep at most half its words in use.
///
/// `@unchecked Sendable`: `all` is read and written only under `lock`; `recent` is atomic.
final class TypeFacts: @unchecked Sendable {
  private let recent = AtomicWordTable(minimumCount: 1_024)
  private let lock = Lock()
  /// Guarded by `lock`.
  private var all: [UInt: UInt] = [:]
  private static let factBits: UInt = 7
  /// The largest table `recent` grows to (8 MiB): past that, types share words.
  private static let maximumTableCount = 1 << 20

  init() {}

  /// The fact for `type`, computed by `compute` (which must return 1 ... 7) the first time.
  func fact(for type: Any.Type, compute: () -> UInt) -> UInt {
    let address = UInt(bitPattern: ObjectIdentifier(type))
    // Metadata is pointer-aligned, so the low bits are free; anything else is not cached.
    guard address & Self.factBits == 0 else { return compute() }
    let word = recent.load(for: address)
    if word & ~Self.factBits == address, word & Self.factBits != 0 { return word & Self.factBits }
    let fact: UInt
    if let known = lock.withLock({ all[address] }) {
      fact = known
    } else {
      // Computed outside the lock: a cast may take long, and two threads computing the same
      // fact at once agree.
      fact = compute() & Self.factBits
      lock.withLock {
        all[address] = fact
        // At most half the table in use, so that few types share a word and keep evicting each
        // other (a program with 10,000 service types outgrew a fixed table).
        if all.count * 2 > recent.count, recent.count < Self.maximumTableCount {
          recent.grow(
            toAtLeast: all.count * 4, entries: all.lazy.map { (key: $0.key, word: $0.key | $0.value) })
        }
      }
    }
    recent.store(address | fact, for: address)
    return fact
  }
}
