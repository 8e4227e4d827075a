import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What Strata remembers per thread while resolves run on it: how deep `Lazy`/`Provider` resolves
/// nest, which scope a shared instance's factory runs for, and where this thread's stack ends.
///
/// Invariant: a context is reached only from its own thread (through ``current``), so its plain
/// fields need no synchronization. It is made on a thread's first use and released by the
/// pthread key's destructor when the thread exits.
///
/// `@unchecked Sendable`: see the invariant; no reference to a context leaves its thread.
/// `ThreadContext.key` plus one, once it is made; 0 before.
private let threadContextKeyPlusOne = Atomic<UInt>(0)

@usableFromInline
final class ThreadContext: @unchecked Sendable {
  // The `var`s are `@exclusivity(unchecked)`: only their own thread touches them, never in
  // overlapping accesses, and the dynamic checks cost more than the resolve that reads them.

  /// How many `Lazy`/`Provider`/`@Injected` resolves enclose the running code on this thread.
  @exclusivity(unchecked) var lazyNesting = 0
  /// The scope whose shared instance (singleton, weak, scoped) is being made by the innermost
  /// running factory, or `nil` when none is. Unretained: it is set only while that factory runs,
  /// and the resolve running it holds the scope.
  @exclusivity(unchecked) @usableFromInline var ambientOwner: Unmanaged<Scope>?
  /// The lowest stack address a resolve may reach before it stops with an error, leaving room
  /// for the error to unwind and for the caller's own code; 0 if the stack is unknown.
  @usableFromInline let stackFloor: UInt
  /// The bounds of this thread's stack: an address outside them is not on it.
  @usableFromInline let stackBounds: Range<UInt>

  private init() {
    let bounds = ThreadContext.measureStack()
    stackBounds = bounds
    stackFloor =
      bounds.isEmpty ? 0 : bounds.lowerBound + ThreadContext.reserve(forStackOfSize: UInt(bounds.count))
  }

  /// The pthread key under which each thread keeps its context. (A `static let` would be
  /// initialized lazily, at the cost of a `swift_once` check on every resolve that needs it; this
  /// is read from `keyPlusOne` instead, which starts as a constant 0.)
  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { context in
      #if canImport(Darwin)
        Unmanaged<ThreadContext>.fromOpaque(context).release()
      #else
        if let context { Unmanaged<ThreadContext>.fromOpaque(context).release() }
      #endif
    }
    return key
  }()

  /// The calling thread's context, made on first use. Unretained: the key's value holds it until
  /// the thread exits, and only this thread reaches it.
  @usableFromInline static var current: Unmanaged<ThreadContext> {
    let keyPlusOne = threadContextKeyPlusOne.load(ordering: .acquiring)
    if keyPlusOne != 0, let existing = pthread_getspecific(pthread_key_t(truncatingIfNeeded: keyPlusOne - 1))
    {
      return Unmanaged.fromOpaque(existing)
    }
    return makeCurrent()
  }

  /// The slow path of ``current``: makes the key (once) and this thread's context.
  @inline(never)
  private static func makeCurrent() -> Unmanaged<ThreadContext> {
    threadContextKeyPlusOne.store(UInt(key) + 1, ordering: .releasing)
    if let existing = pthread_getspecific(key) { return Unmanaged.fromOpaque(existing) }
    let context = Unmanaged.passRetained(ThreadContext())
    pthread_setspecific(key, context.toOpaque())
    return context
  }

  /// Runs `body` with the calling thread's context, touching no reference count.
  @inlinable @inline(__always)
  static func withCurrent<Result>(_ body: (ThreadContext) throws -> Result) rethrows -> Result {
    try current._withUnsafeGuaranteedRef(body)
  }

  /// Whether the stack pointer of the caller is near this thread's stack end: deeper recursion
  /// would overflow it.
  @inlinable @inline(__always)
  func isStackNearlyExhausted() -> Bool {
    var marker: UInt8 = 0
    let address = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
    guard stackBounds.contains(address) else { return isStackPointerBelowFloor() }
    return address < stackFloor
  }

  /// ``isStackNearlyExhausted()`` for a local that is not on the stack: AddressSanitizer keeps
  /// locals in "fake" frames on the heap. Asks the processor's stack pointer instead (slower, and
  /// only ever needed there).
  @usableFromInline @inline(never)
  func isStackPointerBelowFloor() -> Bool {
    guard let stackPointer = ThreadContext.stackPointer() else { return false }
    return stackPointer < stackFloor
  }

  /// The room kept free below a resolve: an eighth of the stack, at least 64 KiB, at most 1 MiB.
  static func reserve(forStackOfSize size: UInt) -> UInt {
    min(max(size / 8, 64 * 1024), 1024 * 1024)
  }

  /// The calling thread's stack pointer, read with `getcontext`; `nil` where that is not known.
  private static func stackPointer() -> UInt? {
    #if canImport(Glibc) && (arch(x86_64) || arch(arm64))
      // `getcontext` is not imported (it returns twice); looked up by name, called by its C type.
      typealias GetContext = @convention(c) (UnsafeMutablePointer<ucontext_t>) -> Int32
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "getcontext") else { return nil }
      var context = ucontext_t()
      guard unsafeBitCast(symbol, to: GetContext.self)(&context) == 0 else { return nil }
      #if arch(x86_64)
        return UInt(bitPattern: Int(context.uc_mcontext.gregs.15))  // REG_RSP
      #else
        return UInt(context.uc_mcontext.sp)
      #endif
    #else
      return nil
    #endif
  }

  /// The calling thread's stack, lowest address first; empty if it cannot be known.
  private static func measureStack() -> Range<UInt> {
    #if canImport(Darwin)
      let thread = pthread_self()
      let top = UInt(bitPattern: pthread_get_stackaddr_np(thread))
      let size = UInt(pthread_get_stacksize_np(thread))
      return (top - size)..<top
    #else
      // `pthread_getattr_np` is a GNU extension the Glibc module does not import; it is looked up
      // by name and called through its C signature.
      typealias GetAttributes =
        @convention(c) (
          pthread_t, UnsafeMutablePointer<pthread_attr_t>
        ) -> Int32
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_getattr_np") else {
        return 0..<0
      }
      let getAttributes = unsafeBitCast(symbol, to: GetAttributes.self)
      var attributes = pthread_attr_t()
      guard getAttributes(pthread_self(), &attributes) == 0 else { return 0..<0 }
      defer { pthread_attr_destroy(&attributes) }
      var base: UnsafeMutableRawPointer?
      var size = 0
      guard pthread_attr_getstack(&attributes, &base, &size) == 0, let base else { return 0..<0 }
      return UInt(bitPattern: base)..<(UInt(bitPattern: base) + UInt(size))
    #endif
  }
}
