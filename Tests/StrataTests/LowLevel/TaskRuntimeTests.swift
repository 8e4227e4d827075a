import Foundation
import Testing

@testable import Strata

/// A class value for task-locals of these tests.
private final class Marker: Sendable {}

/// Task-locals of the tests, each read through the runtime by its key.
private enum Locals {
  static let marker = TaskLocal<Marker?>(wrappedValue: nil)
  static let other = TaskLocal<Marker?>(wrappedValue: nil)
  static let scope = TaskLocal<Scope?>(wrappedValue: nil)

  static var markerKey: UInt { UInt(bitPattern: ObjectIdentifier(marker)) }
  static var otherKey: UInt { UInt(bitPattern: ObjectIdentifier(other)) }
}

private func address(_ object: AnyObject) -> UInt { UInt(bitPattern: ObjectIdentifier(object)) }

extension LowLevel {
  /// The two direct calls into the concurrency runtime (`ThreadContext.boundObject(atTaskLocal:)`
  /// and `ThreadContext.isCurrentTaskCancelled`) answer what `TaskLocal.get()` and
  /// `Task.isCancelled` answer, in every place code can run: a task, a child task, a detached
  /// task, a synchronous `withValue` on a plain thread, and a thread with no task at all.
  @Suite struct TaskRuntimeTests {
    @Test func aTaskLocalReadsAsTheObjectBoundInTheTaskAndItsChildrenAndAsZeroElsewhere() async {
      #expect(ThreadContext.boundObject(atTaskLocal: Locals.markerKey) == 0)
      let outer = Marker()
      let inner = Marker()
      await Locals.marker.withValue(outer) {
        #expect(ThreadContext.boundObject(atTaskLocal: Locals.markerKey) == address(outer))
        // Another task-local's key finds nothing: the key is the task-local, not the value.
        #expect(ThreadContext.boundObject(atTaskLocal: Locals.otherKey) == 0)
        Locals.marker.withValue(inner) {
          #expect(ThreadContext.boundObject(atTaskLocal: Locals.markerKey) == address(inner))
        }
        #expect(ThreadContext.boundObject(atTaskLocal: Locals.markerKey) == address(outer))
        // A child task inherits the binding; a detached task does not.
        async let child = ThreadContext.boundObject(atTaskLocal: Locals.markerKey)
        #expect(await child == address(outer))
        let detached = await Task.detached { ThreadContext.boundObject(atTaskLocal: Locals.markerKey) }.value
        #expect(detached == 0)
      }
      #expect(ThreadContext.boundObject(atTaskLocal: Locals.markerKey) == 0)
    }

    @Test func aBindingMadeOnAPlainThreadIsReadOnThatThreadOnly() async {
      let marker = Marker()
      let seen = Slot<UInt>()
      // The other thread reads while the binding is in place: thread 0 binds, then waits until
      // thread 1 has read. (Plain threads, so blocking them starves no task.)
      let bound = DispatchSemaphore(value: 0)
      let read = DispatchSemaphore(value: 0)
      let finished = await runOnThreads(2) { index in
        guard index == 0 else {
          guard bound.wait(timeout: .now() + 5) == .success else { return }
          seen.value = ThreadContext.boundObject(atTaskLocal: Locals.markerKey)
          read.signal()
          return
        }
        Locals.marker.withValue(marker) {
          bound.signal()
          #expect(read.wait(timeout: .now() + 5) == .success)
          #expect(ThreadContext.boundObject(atTaskLocal: Locals.markerKey) == address(marker))
          #expect(Locals.marker.get() === marker)
        }
        #expect(ThreadContext.boundObject(atTaskLocal: Locals.markerKey) == 0)
      }
      #expect(finished)
      // The other thread, outside any task and any binding of its own, saw nothing.
      #expect(seen.value == 0)
    }

    @Test func aBoundScopeIsReturnedRetainedAndOutlivesItsBinding() async throws {
      let key = UInt(bitPattern: ObjectIdentifier(Locals.scope))
      #expect(ThreadContext.boundScope(atTaskLocal: key) == nil)
      weak var weakRequest: Scope?
      var kept: Scope?
      do {
        let container = try Container { _ in }
        var request: Scope? = try container.makeScope(.request)
        weakRequest = request
        kept = await Locals.scope.withValue(request) {
          async let child = ThreadContext.boundScope(atTaskLocal: key)
          return await child
        }
        #expect(kept === weakRequest)
        request = nil
        #expect(ThreadContext.boundScope(atTaskLocal: key) == nil)
      }
      // The binding is gone and the test's own reference dropped: only the returned one remains.
      #expect(weakRequest != nil)
      kept = nil
      #expect(weakRequest == nil)
    }

    @Test func cancellationReadsAsTheRunningTasksOwnAndFalseOutsideAnyTask() async {
      #expect(!ThreadContext.isCurrentTaskCancelled)
      let cancelled = Task {
        // Wait for the cancellation without sleeping past it: polling stops once it arrives.
        while !Task.isCancelled { await Task.yield() }
        return (ThreadContext.isCurrentTaskCancelled, Task.isCancelled)
      }
      cancelled.cancel()
      let (direct, standard) = await cancelled.value
      #expect(direct && standard)
      // A child of a cancelled task is cancelled; a detached task started from it is not.
      let parent = Task {
        while !Task.isCancelled { await Task.yield() }
        async let child = ThreadContext.isCurrentTaskCancelled
        let detached = await Task.detached { ThreadContext.isCurrentTaskCancelled }.value
        return (await child, detached)
      }
      parent.cancel()
      let (child, detached) = await parent.value
      #expect(child)
      #expect(!detached)
      let outside = Slot<Bool>()
      #expect(await runOnThreads(1) { _ in outside.value = ThreadContext.isCurrentTaskCancelled })
      #expect(outside.value == false)
    }
  }
}
