import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Nanoseconds on the monotonic clock.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
  var time = timespec()
  clock_gettime(CLOCK_MONOTONIC, &time)
  return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}

/// Writes `text` and a newline to standard error, where all progress and diagnostics go so that
/// standard output holds only the report.
func printError(_ text: String) {
  var line = text + "\n"
  line.withUTF8 { bytes in
    var remaining = UnsafeRawBufferPointer(bytes)
    while !remaining.isEmpty {
      let written = write(2, remaining.baseAddress, remaining.count)
      if written <= 0 { return }
      remaining = UnsafeRawBufferPointer(rebasing: remaining[written...])
    }
  }
}

/// The resident set size of this process in bytes, from `/proc/self/statm`; `nil` where that
/// file does not exist.
func residentBytes() -> Int? {
  let descriptor = open("/proc/self/statm", O_RDONLY)
  guard descriptor >= 0 else { return nil }
  defer { close(descriptor) }
  var buffer = [UInt8](repeating: 0, count: 256)
  let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
  guard count > 0 else { return nil }
  // "size resident shared text lib data dt", in pages.
  let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
  guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return nil }
  return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// How many processors are online.
var onlineProcessors: Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

/// Runs `body` on a new POSIX thread.
///
/// - Returns: The thread, to pass to ``join(_:)``; `nil` if it could not be created.
func spawnThread(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
  let context = Unmanaged.passRetained(ThreadStart(body)).toOpaque()
  var thread = pthread_t()
  let status = pthread_create(
    &thread, nil,
    { context in
      guard let context else { return nil }
      Unmanaged<ThreadStart>.fromOpaque(context).takeRetainedValue().body()
      return nil
    }, context)
  guard status == 0 else {
    Unmanaged<ThreadStart>.fromOpaque(context).release()
    return nil
  }
  return thread
}

/// Waits for a thread made by ``spawnThread(_:)`` to finish.
func join(_ thread: pthread_t) {
  pthread_join(thread, nil)
}

/// What a new thread runs.
private final class ThreadStart: Sendable {
  let body: @Sendable () -> Void

  init(_ body: @escaping @Sendable () -> Void) {
    self.body = body
  }
}

/// Never true: keeps ``blackHole(_:)``'s side effect opaque to the optimizer.
private let blackHoleEscapes = Atomic<Bool>(false)

/// Consumes `value` so that the optimizer can neither delete the work that produced it nor
/// allocate it on the stack: as far as the compiler knows, the value may escape.
///
/// The check is one relaxed load of a flag nobody writes, so concurrent callers share the cache
/// line without contention.
@inline(never)
func blackHole<Value>(_ value: Value) {
  if blackHoleEscapes.load(ordering: .relaxed) {
    printError("\(value)")
  }
}
