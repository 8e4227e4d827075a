import Testing

@testable import Strata

/// A `SkipLink` shared by a writer and its readers, as a scope shares its own.
private final class SkipLinkHolder: Sendable {
  let link = SkipLink()
}

extension LowLevel {
  /// The links of the scope tree on their own: `TreeLinks` (a scope holds its parent, so its whole
  /// chain), `ChildList` (a parent holds a linked child exactly while it is linked, newest first),
  /// `SkipLink` (a cached target is trusted only for its generation) and `SnapshotCell` (one
  /// published snapshot, which it does not own).
  @Suite struct TreeLinksTests {
    // MARK: - TreeLinks

    @Test func everyScopeLinksToItsParentAndToTheRoot() throws {
      let container = Container()
      let session = try container.makeScope(.session)
      let request = try session.makeScope(.request)

      #expect(container.links.isRoot)
      #expect(container.links.parent == nil)
      #expect(container.links.root == nil, "the root has no root link")
      #expect(!session.links.isRoot)
      #expect(session.links.parent.map { $0 === ScopeRef(container) } == true)
      #expect(session.links.root.map { $0 === ScopeRef(container) } == true)
      #expect(!request.links.isRoot)
      #expect(request.links.parent.map { $0 === ScopeRef(session) } == true)
      #expect(request.links.root.map { $0 === ScopeRef(container) } == true)
    }

    @Test func aParentLinkHoldsOneRetainUntilItIsGivenBack() throws {
      let container = Container()
      weak var watched: Scope?
      var links: TreeLinks?
      do {
        let session = try container.makeScope(.session)
        watched = session
        links = TreeLinks(retainedParent: TreeLinks.retain(session))
      }

      #expect(watched != nil, "the links keep their parent")
      #expect(links?.parent?.scope === watched)
      #expect(links?.root.map { $0 === ScopeRef(container) } == true, "the root is the parent's root")
      links?.releaseParent()
      #expect(watched == nil)
      links = nil
      _ = links
    }

    @Test func aDeepChainKeepsItsAncestorsAliveAndFreeingTheLeafFreesTheChain() throws {
      let depth = 200
      var watched: [WeakBox<Scope>] = []
      var leaf: Scope?
      do {
        let container = Container()
        watched.append(WeakBox(container))
        var current: Scope = container
        for _ in 0..<depth {
          current = try current.makeScope(.request)
          watched.append(WeakBox(current))
        }
        leaf = current
      }

      #expect(watched.allSatisfy { $0.object != nil }, "the leaf holds every ancestor")
      var ancestors = 0
      var current = leaf?.links.parent
      while let scope = current {
        ancestors += 1
        current = scope.parent
      }
      #expect(ancestors == depth)
      #expect(leaf?.links.root?.scope === watched.first?.object, "every scope links to the root")

      leaf = nil
      _ = leaf
      #expect(watched.allSatisfy { $0.object == nil }, "freeing the leaf freed the chain")
    }

    @Test func aPlainChildDoesNotKeepItsParentsOtherChildrenAlive() throws {
      let container = Container()
      let kept = try container.makeScope(.request)
      weak var dropped: Scope?
      do {
        dropped = try container.makeScope(.request)
      }

      #expect(dropped == nil, "an unlinked child is freed as soon as nobody holds it")
      #expect(kept.parent === container)
    }

    // MARK: - ChildList

    @Test func linkedChildrenAreTakenOutNewestFirst() throws {
      let container = Container()
      let scopes = try ["a", "b", "c"].map { try container.makeScope(.request, name: $0) }
      var list = ChildList()
      #expect(list.isEmpty)

      for scope in scopes { list.link(scope) }
      let linked = scopes.map(\.siblings.isLinked)
      let notEmpty = !list.isEmpty
      let taken = list.takeAll()

      #expect(notEmpty)
      #expect(linked == [true, true, true])
      #expect(taken.map(\.name) == ["c", "b", "a"])
      #expect(list.isEmpty)
      #expect(
        scopes.allSatisfy { !$0.siblings.isLinked && $0.siblings.next == nil && $0.siblings.previous == nil })
    }

    @Test func unlinkingAnyChildKeepsTheOthersInOrder() throws {
      let container = Container()
      let scopes = try ["a", "b", "c", "d", "e"].map { try container.makeScope(.request, name: $0) }
      var list = ChildList()
      for scope in scopes { list.link(scope) }  // e d c b a

      var unlinked: [Bool] = []
      for index in [2, 4, 0] {  // the middle, the front, the back
        unlinked.append(list.unlink(scopes[index]))
        ChildList.giveBack(scopes[index])
      }
      let again = list.unlink(scopes[2])
      let taken = list.takeAll()

      #expect(unlinked == [true, true, true])
      #expect(!again, "a child is unlinked once")
      #expect(taken.map(\.name) == ["d", "b"])
    }

    @Test func aScopeThatWasNeverLinkedIsNotUnlinked() throws {
      let container = Container()
      let linked = try container.makeScope(.request, name: "linked")
      let other = try container.makeScope(.request, name: "other")
      var list = ChildList()
      list.link(linked)

      let removed = list.unlink(other)
      let taken = list.takeAll()

      #expect(!removed)
      #expect(taken.map(\.name) == ["linked"])
    }

    @Test func aLinkedChildIsKeptAliveExactlyWhileItIsLinked() throws {
      let container = Container()
      var list = ChildList()
      weak var watched: Scope?
      do {
        let child = try container.makeScope(.request)
        watched = child
        list.link(child)
      }
      #expect(watched != nil, "the list holds a linked child")

      var wasLinked = false
      if let child = watched {
        wasLinked = list.unlink(child)
        if wasLinked { ChildList.giveBack(child) }
      }

      #expect(wasLinked)
      #expect(watched == nil, "unlinked and given back, the child is freed")
      #expect(list.isEmpty)
    }

    @Test func takingAllChildrenHandsOverTheListsRetains() throws {
      let container = Container()
      var list = ChildList()
      let watched = try (0..<3).map { _ in
        let child = try container.makeScope(.request)
        list.link(child)
        return WeakBox<Scope>(child)
      }
      #expect(watched.allSatisfy { $0.object != nil })

      var taken: [Scope]? = list.takeAll()
      #expect(taken?.count == 3)
      #expect(watched.allSatisfy { $0.object != nil }, "the array holds what the list held")

      taken = nil
      _ = taken
      #expect(watched.allSatisfy { $0.object == nil }, "and no retain was left behind")
    }

    @Test func aScopeOwningADisposableIsHeldByItsParentUntilTheParentCloses() throws {
      let disposed = Counter()
      let container = try Container { registry in
        registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
          TrackedResource("request resource", disposed: disposed)
        }
      }
      weak var watched: Scope?
      do {
        let request = try container.makeScope(.request)
        watched = request
        _ = try request.resolve(TrackedResource.self)
      }
      #expect(watched != nil, "the container keeps its linked child for its close")
      #expect(watched?.siblings.isLinked == true)

      try container.close()

      #expect(disposed.value == 1)
      #expect(watched == nil)
    }

    @Test func closingALinkedScopeUnlinksItFromItsParent() throws {
      let container = try Container { registry in
        registry.register(TrackedResource.self, lifetime: .scoped(.request)) { _ in
          TrackedResource("resource")
        }
      }
      weak var watched: Scope?
      do {
        let request = try container.makeScope(.request)
        watched = request
        _ = try request.resolve(TrackedResource.self)
        #expect(request.siblings.isLinked)
        try request.close()
        #expect(!request.siblings.isLinked)
      }

      #expect(watched == nil, "the parent let go of the closed child")
    }

    // MARK: - SkipLink

    @Test func aSkipLinkAnswersOnlyForTheGenerationItWasStoredWith() throws {
      let container = Container()
      let session = try container.makeScope(.session)
      let link = SkipLink()

      let fresh = link.target(ifOf: 0)
      link.store(ScopeRef(container), generation: 3)
      let current = link.target(ifOf: 3)
      let older = link.target(ifOf: 2)
      let newer = link.target(ifOf: 4)
      link.store(ScopeRef(session), generation: 4)
      let replaced = link.target(ifOf: 4)
      let stale = link.target(ifOf: 3)
      link.store(nil, generation: 5)
      let noTarget = link.target(ifOf: 5)

      #expect(fresh == nil, "a new link is stale")
      #expect(current.map { $0.map { $0 === ScopeRef(container) } } == .some(.some(true)))
      #expect(older == nil)
      #expect(newer == nil)
      #expect(replaced.map { $0.map { $0 === ScopeRef(session) } } == .some(.some(true)))
      #expect(stale == nil)
      #expect(noTarget.map { $0 == nil } == true, "a current answer that no scope has registrations")
    }

    @Test func aReaderNeverTrustsATargetStoredWithAnotherGeneration() async throws {
      let container = Container()
      let session = try container.makeScope(.session)
      let holder = SkipLinkHolder()
      let mismatches = Counter()
      let writerDone = Flag()
      let start = Barrier(parties: 3)
      // Under ThreadSanitizer, three threads hammering two atomics fill its trace buffers and
      // its global resets stall every thread of the test process (seen as a hang and a crash
      // inside the runtime), so the race is run shorter there; plain runs take the full count.
      let rounds = Sanitizers.threadSanitizerIsActive ? 5_000 : 200_000

      // One writer (as under the owner's lock) stores the container for even generations and the
      // session for odd ones; readers ask about the generation they just saw, as a resolve does.
      let finished = await runOnThreads(3) { thread in
        start.arriveAndWait()
        if thread == 0 {
          for generation in 1...UInt(rounds) {
            holder.link.store(ScopeRef(generation % 2 == 0 ? container : session), generation: generation)
          }
          writerDone.raise()
          return
        }
        var reads = 0
        while !writerDone.isRaised && reads < rounds * 4 {
          reads += 1
          let generation = holder.link.generation.load(ordering: .acquiring)
          if generation == SkipLink.writing { continue }  // no resolve asks about a link being written
          guard let answer = holder.link.target(ifOf: generation), let target = answer else { continue }
          let expected: Scope = generation % 2 == 0 ? container : session
          if !(target === ScopeRef(expected)) { mismatches.increment() }
        }
      }

      #expect(finished)
      #expect(mismatches.value == 0, "a reader paired a generation with another generation's target")
    }

    // MARK: - SnapshotCell

    @Test func aSnapshotCellIsEmptyUntilASnapshotIsPublished() {
      let cell = SnapshotCell()

      let empty = cell.isEmpty
      let current = cell.current
      let read = cell.withCurrent { _ in true }

      #expect(empty)
      #expect(current == nil)
      #expect(read == nil, "withCurrent does not run its body on an empty cell")
    }

    @Test func aSnapshotCellHandsOutTheLatestPublishedSnapshot() throws {
      let first = Registry(previous: nil, adding: RegistrationRun([]))
      let second = Registry(previous: first, adding: RegistrationRun([]))
      let cell = SnapshotCell()

      cell.publish(first)
      let afterFirst = (cell.isEmpty, cell.current, cell.withCurrent { $0 === first })
      cell.publish(second)
      let afterSecond = (cell.current, cell.withCurrent { $0 === second })

      #expect(!afterFirst.0)
      #expect(afterFirst.1 === first)
      #expect(afterFirst.2 == true)
      #expect(afterSecond.0 === second)
      #expect(afterSecond.1 == true)
    }

    @Test func withCurrentRethrowsWhatItsBodyThrows() {
      let snapshot = Registry(previous: nil, adding: RegistrationRun([]))
      let cell = SnapshotCell()
      cell.publish(snapshot)

      #expect(throws: FixtureError(code: 3)) {
        try cell.withCurrent { _ -> Int in throw FixtureError(code: 3) }
      }
    }

    @Test func aSnapshotCellDoesNotOwnWhatItPublishes() {
      let cell = SnapshotCell()
      weak var watched: Registry?
      do {
        let snapshot = Registry(previous: nil, adding: RegistrationRun([]))
        watched = snapshot
        cell.publish(snapshot)
      }

      // The cell now points at a freed snapshot; as its invariant says, it is not read again.
      #expect(watched == nil, "whoever publishes keeps the snapshot alive, not the cell")
    }

    @Test func aScopesCellHoldsItsRegistrationsOnceItHasAny() throws {
      let container = Container()
      let session = try container.makeScope(.session)
      let before = session.registry.isEmpty

      try session.register { registry in registry.register(Widget.self) { _ in Widget(id: 1) } }
      let after = session.registry.isEmpty
      let registered = session.registry.withCurrent { snapshot in
        snapshot.latest(for: ServiceKey(Widget.self, name: nil)) != nil
      }

      #expect(before)
      #expect(!after)
      #expect(registered == true)
      #expect(try session.resolve(Widget.self).id == 1)
    }
  }
}
