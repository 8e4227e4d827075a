import Foundation
import Strata
import Synchronization
import Testing

/// Keeps `buffer` on the stack: a factory frame of 12 KiB.
@inline(never) private func touch(_ buffer: inout InlineArray<1536, UInt64>) -> Int {
  buffer[0] &+= 1
  return Int(buffer[0] & 1)
}

/// Runs `body` on a new thread whose stack is `stackSize` bytes, and returns what it returned.
private func onThread(stackSize: Int, _ body: @escaping @Sendable () -> String) -> String {
  let result = Mutex<String>("")
  let done = DispatchSemaphore(value: 0)
  let thread = Thread {
    let text = body()
    result.withLock { $0 = text }
    done.signal()
  }
  thread.stackSize = stackSize
  thread.start()
  done.wait()
  return result.withLock { $0 }
}

/// Every nested resolve checks that the thread's stack has room left, so that a chain of
/// factories stops with `depthLimitExceeded` rather than overflowing the stack, whatever their
/// frames' size; and a small stack still has room for a plain resolve.
@Suite struct StackRoomTests {
  @Test func factoriesWithLargeFramesStopBeforeTheEndOfA512KiBStack() throws {
    let count = 2000
    let container = try Container { registry in
      for index in 0..<count {
        registry.register(Int.self, name: index) { resolver in
          var buffer = InlineArray<1536, UInt64>(repeating: 0)
          let bit = touch(&buffer)
          return index == count - 1 ? bit : try resolver.resolve(Int.self, name: index + 1) + bit
        }
      }
    }
    let outcome = onThread(stackSize: 512 * 1024) {
      do {
        return "resolved \(try container.resolve(Int.self, name: 0))"
      } catch let error as ResolutionError {
        return error.code.rawValue
      } catch {
        return "\(error)"
      }
    }
    #expect(outcome == "depthLimitExceeded")
  }

  @Test func aThreadWithA64KiBStackResolves() throws {
    let container = try Container { registry in
      registry.register(Int.self) { _ in 42 }
      registry.register(String.self) { resolver in "answer \(try resolver.resolve(Int.self))" }
    }
    let outcome = onThread(stackSize: 64 * 1024) {
      (try? container.resolve(String.self)) ?? "failed"
    }
    #expect(outcome == "answer 42")
  }
}
