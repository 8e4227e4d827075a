extension Scope {
  /// Creates a child scope: a request, a session, or a scope of your own kind.
  ///
  /// ```swift
  /// let session = try container.makeScope(.session, name: user.id)
  /// let request = try session.makeScope(.request)
  /// defer { try? request.close() }
  /// let cart = try request.resolve(Cart.self)   // scoped(.session): shared by the session's requests
  /// ```
  ///
  /// Creating a child copies nothing and takes no lock: it costs one allocation. The child sees
  /// every registration of its ancestors. Once it owns something to dispose, this scope tracks it
  /// (and keeps it alive) until it is closed — by you, or by closing this scope — so close every
  /// scope you make, or use ``withScope(_:name:_:)``. Closing an ancestor closes it too.
  ///
  /// - Parameters:
  ///   - tag: The kind of scope, such as ``ScopeTag/request``; `scoped(tag)` registrations find it.
  ///   - name: An optional label for messages, such as a session id.
  /// - Returns: The new, open scope.
  /// - Throws: ``ResolutionError`` with code ``ResolutionError/Code/scopeClosed`` if this scope is
  ///   closed.
  public final func makeScope(_ tag: ScopeTag, name: String? = nil) throws -> Scope {
    guard !Scope.isClosed(ScopeRef(self)) else { throw closedError(making: tag) }
    return Scope(tag: tag, name: name, links: TreeLinks(retainedParent: TreeLinks.retain(self)))
  }

  /// The error for making a child of this closed scope.
  private func closedError(making tag: ScopeTag) -> ResolutionError {
    ResolutionError(.childOfClosedScope(scope: chainDescription, tag: tag))
  }

  /// Creates a child scope with registrations of its own: additions and overrides that it and its
  /// descendants see, and nobody else.
  ///
  /// ```swift
  /// let tenant = try container.makeScope(.tenant, name: "acme") { registry in
  ///   registry.register(instance: TenantConfig(id: "acme"))
  ///   registry.register(Storage.self, lifetime: .singleton) { _ in S3Storage(bucket: "acme") }
  /// }
  /// ```
  ///
  /// A singleton registered here is one instance per such scope, disposed when the scope closes.
  ///
  /// - Parameters:
  ///   - tag: The kind of scope.
  ///   - name: An optional label for messages.
  ///   - build: Receives a ``Registrar`` for the scope's own registrations.
  /// - Returns: The new, open scope.
  /// - Throws: ``ResolutionError`` if this scope is closed or a registration is invalid; what
  ///   `build` throws. Nothing is left open when it throws.
  public final func makeScope(
    _ tag: ScopeTag, name: String? = nil, _ build: (Registrar) throws -> Void
  ) throws -> Scope {
    let child = try makeScope(tag, name: name)
    do {
      try child.register(build)
    } catch {
      // Eager singletons made before the failure are disposed; their errors travel with it.
      throw ScopeExitError.closing(child, after: error)
    }
    return child
  }

  /// Links this scope, and the scopes above it, into their parents' lists of children to close,
  /// so that closing an ancestor closes this scope first. Called before a scope takes its first
  /// instance to dispose; a linked scope stays alive until it is closed (the list retains it).
  ///
  /// - Returns: `false` if this scope or an ancestor is closing: nothing may be added to it.
  ///
  /// The parent is reached through a ``ScopeRef`` (this scope holds it): no retain and release
  /// per level, on a path every request that owns a disposable takes.
  func ensureLinked() -> Bool {
    guard let parent = links.parent else { return !isClosing }
    return parent.with { parent in
      guard parent.ensureLinked() else { return false }
      let isRoot = parent.links.isRoot
      return parent.childShards.withObject(making: { ChildShards(isRoot: isRoot) }) { shards in
        shards.withShard(of: self) { shard in
          guard parent.lifecycle.takeOwnership() else { return false }
          guard !siblings.isLinked else { return true }
          guard lifecycle.requestLink() else { return false }
          shard.children.link(self)
          return true
        }
      }
    }
  }

  /// Unlinks this scope from its parent's list of children to close, if it is linked.
  ///
  /// At the end of a synchronous close, `left` is what that close left to a background task (see
  /// ``LeftDisposal``): it is kept here first, for a close of this scope that waited for this one,
  /// and handed to the parent if this scope was still linked there, under the lock of the shard
  /// the parent's close takes this scope under: either that close took this scope as a child (and
  /// follows what it left through it), or it finds the task in its list and waits for it.
  func detachFromParent(leaving left: LeftDisposal? = nil) {
    if let left { withState { $0.leftBehind = left } }
    guard let parent = links.parent else { return }
    let wasLinked = parent.with { parent in
      parent.childShards.withObjectIfMade { shards in
        shards?.withShard(of: self) { shard in
          guard shard.children.unlink(self) else { return false }
          if let left { shard.leftBehind.append(left) }
          return true
        } ?? false
      }
    }
    // Give back the list's retain, outside the lock; the caller holds another.
    if wasLinked { ChildList.giveBack(self) }
  }
}
