import Testing

@testable import Strata

/// A cell shared by several threads, as a registration shares its own.
///
/// `@unchecked Sendable`: the cell is written by one thread at a time (the test's creating
/// thread) and read by others only after an acquiring load saw it ready, as its invariant says.
private final class CellHolder<Value>: @unchecked Sendable {
  let cell: TypedCell<Value>

  init(_ initial: Value? = nil) {
    cell = TypedCell(initial)
  }
}

/// A cell used as a registration uses it: always with one value type, dropped when freed.
private struct TypedCell<Value>: ~Copyable {
  let cell: SharedInstanceCell

  init(_ initial: Value?) {
    if let initial {
      cell = SharedInstanceCell(holding: initial)
    } else {
      cell = SharedInstanceCell(for: Value.self, holdsInstances: true)
    }
  }

  deinit { cell.drop(as: Value.self) }

  var isReady: Bool { cell.isReady }
  var readyValue: Value? { cell.readyValue(as: Value.self) }
  var provisionalValue: Value? { cell.provisionalValue(as: Value.self) }
  func provision(_ value: Value) { cell.provision(value) }
  func publish(_ value: Value) { cell.publish(value) }
  func clear() -> Value? { cell.clear(as: Value.self) }
}

/// What a cell shows its readers, read in one go (`#expect` cannot take the non-copyable cell).
private struct Observed<Value> {
  let isReady: Bool
  let ready: Value?
  let provisional: Value?

  init(_ cell: borrowing TypedCell<Value>) {
    isReady = cell.isReady
    ready = cell.readyValue
    provisional = cell.provisionalValue
  }
}

extension LowLevel {
  /// `SharedInstanceCell`, where a singleton is kept, on its own: what it holds is seen by other
  /// threads only once published, the creating thread alone sees it provisionally, and the cell
  /// holds exactly one retain of it, given back when it is cleared or freed.
  @Suite struct SharedInstanceCellTests {
    @Test func anEmptyCellHoldsNothing() {
      let cell = TypedCell<Widget>(nil)

      let seen = Observed(cell)
      #expect(!seen.isReady)
      #expect(seen.ready == nil)
      #expect(seen.provisional == nil)
    }

    @Test func aCellMadeWithAnInstanceIsReadyAtOnce() {
      let widget = Widget(id: 1)
      let cell = TypedCell(widget)

      let seen = Observed(cell)
      #expect(seen.isReady)
      #expect(seen.ready === widget)
      #expect(seen.provisional == nil, "a ready instance is not provisional")
    }

    @Test func aProvisionedInstanceIsSeenOnlyAsProvisionalUntilPublished() {
      let widget = Widget(id: 1)
      let cell = TypedCell<Widget>(nil)

      cell.provision(widget)
      let provisioned = Observed(cell)
      cell.publish(widget)
      let published = Observed(cell)

      #expect(!provisioned.isReady)
      #expect(provisioned.ready == nil, "other threads do not see it yet")
      #expect(provisioned.provisional === widget)
      #expect(published.isReady)
      #expect(published.ready === widget)
      #expect(published.provisional == nil)
    }

    @Test func publishingWithoutProvisioningStoresTheInstance() {
      let cell = TypedCell<Widget>(nil)

      cell.publish(Widget(id: 7))

      #expect(Observed(cell).ready?.id == 7)
    }

    @Test func valuesAreKeptWhole() {
      let cell = TypedCell<Greeting>(nil)

      cell.publish(Greeting(text: "a greeting of \(6 * 7) characters, well past inline strings"))

      #expect(Observed(cell).ready == Greeting(text: "a greeting of 42 characters, well past inline strings"))
    }

    @Test func clearingEmptiesTheCellAndHandsOverItsInstance() {
      let cell = TypedCell<Widget>(nil)
      weak var watched: Widget?
      var taken: Widget?
      do {
        let widget = Widget(id: 3)
        watched = widget
        cell.publish(widget)
        taken = cell.clear()
      }

      let seen = Observed(cell)
      #expect(taken === watched)
      #expect(!seen.isReady)
      #expect(seen.ready == nil)
      #expect(seen.provisional == nil)
      taken = nil
      #expect(watched == nil, "the cell gave its retain away with the instance")
      _ = taken
    }

    @Test func aClearedCellCanBeFilledAgain() {
      let cell = TypedCell<Widget>(nil)
      cell.provision(Widget(id: 1))
      _ = cell.clear()  // as a failed activation hook does

      cell.publish(Widget(id: 2))

      #expect(Observed(cell).ready?.id == 2)
    }

    @Test func freeingTheCellReleasesItsInstance() {
      weak var published: Widget?
      weak var provisioned: Widget?
      weak var initial: Widget?
      do {
        let first = Widget(id: 1)
        let second = Widget(id: 2)
        let third = Widget(id: 3)
        published = first
        provisioned = second
        initial = third
        let publishedCell = TypedCell<Widget>(nil)
        publishedCell.publish(first)
        let provisionedCell = TypedCell<Widget>(nil)
        provisionedCell.provision(second)
        let initialCell = TypedCell(third)
        let ready = (publishedCell.isReady, initialCell.isReady, provisionedCell.isReady)
        #expect(ready == (true, true, false))
      }

      #expect(published == nil)
      #expect(provisioned == nil)
      #expect(initial == nil)
    }

    @Test func readersOnOtherThreadsSeeNothingOrTheWholePublishedInstance() async {
      for round in 0..<200 {
        let holder = CellHolder<Widget>()
        let wrong = Counter()
        let finished = await runOnThreads(3) { thread in
          if thread == 0 {
            holder.cell.publish(Widget(id: round))
            return
          }
          for _ in 0..<2_000 {
            guard let widget = holder.cell.readyValue else { continue }
            if widget.id != round { wrong.increment() }
          }
        }
        #expect(finished)
        #expect(wrong.value == 0)
        #expect(Observed(holder.cell).ready?.id == round)
      }
    }

    // MARK: - Through a container

    @Test func aSingletonRacedForByManyThreadsIsMadeOnceAndSeenByAll() async throws {
      for _ in 0..<50 {
        let runs = Counter()
        let container = try Container { registry in
          registry.register(Widget.self, lifetime: .singleton) { _ in
            pause(microseconds: 200)
            return Widget(id: runs.increment())
          }
        }
        let resolved = Collector<ObjectIdentifier>()
        let finished = await runOnThreads(4) { _ in
          if let widget = try? container.resolve(Widget.self) { resolved.append(ObjectIdentifier(widget)) }
        }
        #expect(finished)
        #expect(runs.value == 1)
        #expect(resolved.elements.count == 4)
        #expect(Set(resolved.elements).count == 1)
      }
    }

    @Test func aSingletonIsReleasedWithTheContainerThatMadeIt() throws {
      weak var watched: Widget?
      weak var watchedContainer: Container?
      do {
        let container = try Container { registry in
          registry.register(Widget.self, lifetime: .singleton) { _ in Widget(id: 1) }
        }
        watchedContainer = container
        watched = try container.resolve(Widget.self)
        #expect(watched != nil, "the container keeps its singleton")
      }

      #expect(watchedContainer == nil)
      #expect(watched == nil)
    }

    @Test func aScopesOwnSingletonIsReleasedWhenTheScopeCloses() throws {
      let container = Container()
      let tenant = try container.makeScope(.customTenant) { registry in
        registry.register(Widget.self, lifetime: .singleton) { _ in Widget(id: 1) }
      }
      weak var watched: Widget?
      do {
        watched = try tenant.resolve(Widget.self)
      }
      #expect(watched != nil)

      try tenant.close()

      #expect(watched == nil, "a closed scope that is still held keeps no singleton alive")
    }
  }
}
