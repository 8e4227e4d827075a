import Strata
import Testing

/// A scope keeps its first disposal inline and the others in an array: every count of disposables,
/// around that boundary, must be disposed the same way — each once, newest first, with the async
/// ones found wherever they sit, and nothing kept alive after the close.
@Suite struct DisposalStackTests {
  /// A container with `count` request-scoped resources named `0 ..< count`, logged as
  /// `dispose <n>`; those in `asynchronous` are ``AsyncTrackedResource``s under `AsyncTrackedResource`.
  private static func makeContainer(count: Int, asynchronous: Set<Int> = [], log: Collector<String>) throws
    -> Container
  {
    try Container { registry in
      for number in 0..<count {
        if asynchronous.contains(number) {
          registry.register(AsyncTrackedResource.self, name: number, lifetime: .scoped(.request)) { _ in
            AsyncTrackedResource("\(number)", log: log)
          }
        } else {
          registry.register(TrackedResource.self, name: number, lifetime: .scoped(.request)) { _ in
            TrackedResource("\(number)", log: log)
          }
        }
      }
    }
  }

  @Test(arguments: [1, 2, 3, 5])
  func everyCountIsDisposedOnceNewestFirst(count: Int) throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(count: count, log: log)
    let request = try container.makeScope(.request)
    weak var first: TrackedResource?
    var resources: [TrackedResource] = []
    for number in 0..<count {
      resources.append(try request.resolve(TrackedResource.self, name: number))
    }
    first = resources.first
    resources.removeAll()

    try request.close()

    #expect(log.elements == (0..<count).reversed().map { "dispose \($0)" })
    // The closed scope, still held, keeps nothing: the inline first disposal was given up too.
    #expect(first == nil)
    try request.close()
    #expect(log.elements.count == count)
  }

  @Test func anAsyncDisposerInlineOrLaterIsAwaitedInOrder() async throws {
    for asynchronous in [Set([0]), [2], [0, 2]] {
      let log = Collector<String>()
      let container = try Self.makeContainer(count: 3, asynchronous: asynchronous, log: log)
      let request = try container.makeScope(.request)
      for number in 0..<3 {
        if asynchronous.contains(number) {
          _ = try request.resolve(AsyncTrackedResource.self, name: number)
        } else {
          _ = try request.resolve(TrackedResource.self, name: number)
        }
      }

      try await request.close()

      let expected = (0..<3).reversed().map {
        asynchronous.contains($0) ? "async dispose \($0)" : "dispose \($0)"
      }
      #expect(log.elements == expected, "async disposers at \(asynchronous.sorted())")
    }
  }

  @Test func aSynchronousCloseReportsAnInlineAsyncDisposerAndStillDisposesTheRest() async throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(count: 2, asynchronous: [0], log: log)
    let request = try container.makeScope(.request)
    let asynchronous = try request.resolve(AsyncTrackedResource.self, name: 0)
    _ = try request.resolve(TrackedResource.self, name: 1)

    let error = try #require(throws: ResolutionError.self) { try request.close() }

    #expect(error.code == .disposalFailed)
    #expect(error.disposalErrors.count == 1)
    #expect((error.disposalErrors.first as? DisposalError)?.underlying is AsyncDisposalRequired)
    #expect(log.elements.first == "dispose 1")
    // The async one runs in a background task: wait for it without blocking a thread of the
    // task pool (two on this machine kind), then check it ran once.
    #expect(await eventually(timeout: .seconds(30)) { asynchronous.disposeCount == 1 })
    #expect(asynchronous.disposeCount == 1)
  }

  @Test func aRequestLeftOpenIsDisposedByTheContainerWithItsOnlyDisposable() throws {
    let log = Collector<String>()
    let container = try Self.makeContainer(count: 1, log: log)
    weak var request: Scope?
    do {
      let open = try container.makeScope(.request)
      _ = try open.resolve(TrackedResource.self, name: 0)
      request = open
    }
    // Linked into the container when it took its disposable: still alive, still open.
    #expect(request?.isClosed == false)

    try container.close()

    #expect(log.elements == ["dispose 0"])
    #expect(request == nil)
  }
}
