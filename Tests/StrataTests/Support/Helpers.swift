import Strata

// MARK: - Keys

/// The service types of `keys`, comparable with `identifiers(of:)`.
func identifiers(_ keys: [ServiceKey]) -> [ObjectIdentifier] {
  keys.map { ObjectIdentifier($0.serviceType) }
}

/// The identities of `types`, in order.
func identifiers(of types: Any.Type...) -> [ObjectIdentifier] {
  types.map { ObjectIdentifier($0) }
}

/// Whether `key` is the plain key of `type`: no name, no runtime arguments.
func isPlainKey(_ key: ServiceKey, of type: Any.Type) -> Bool {
  ObjectIdentifier(key.serviceType) == ObjectIdentifier(type) && !key.isNamed && !key.hasArguments
}

/// The registration of `type` among `descriptors`, if there is exactly one.
func descriptor(of type: Any.Type, in descriptors: [RegistrationDescriptor]) -> RegistrationDescriptor? {
  let matching = descriptors.filter { ObjectIdentifier($0.key.serviceType) == ObjectIdentifier(type) }
  return matching.count == 1 ? matching[0] : nil
}

// MARK: - Scopes

/// Closes `scope` with the synchronous `close()`, whatever context the caller runs in (in
/// async code, `scope.close()` means the async one).
func closeSynchronously(_ scope: Scope) throws {
  try scope.close()
}

/// Resolves `type` from `scope`, opening the metatype.
func resolveOpened(_ type: Any.Type, from scope: Scope) throws -> Any {
  func open<Service>(_: Service.Type) throws -> Any { try scope.resolve(Service.self) }
  return try _openExistential(type, do: open)
}

/// Reads a `Lazy` of `type` made by `resolver`: a resolve that runs as a fresh top-level one.
func readLazy(of type: Any.Type, _ resolver: borrowing Resolver) throws {
  let lazy = try lazyOpened(type, resolver)
  _ = try lazy()
}

private func lazyOpened(_ type: Any.Type, _ resolver: borrowing Resolver) throws -> () throws -> Any {
  func make<Service>(_: Service.Type) -> () throws -> Any {
    let lazy = resolver.lazy(Service.self)
    return { try lazy.value }
  }
  return _openExistential(type, do: make)
}

// MARK: - Chains of distinct types

/// Registers `ChainEnd` and `length` links around it, each resolving the next inner one, and
/// calls `body` with the outermost type. `closeWith` lets the innermost factory resolve something
/// else (to close a cycle through `Lazy`, say); by default it makes a plain `ChainEnd`.
func registerChain<Inner>(
  into registry: Registrar, around inner: Inner.Type, length: Int, depth: Int = 1,
  closeWith: @escaping @Sendable (borrowing Resolver, Any.Type) throws -> Void = { _, _ in },
  _ body: (Any.Type) -> Void
) {
  registry.register(Link<Inner>.self) { resolver in
    _ = try resolver.resolve(Inner.self)
    return Link(depth: depth)
  }
  guard length > 1 else {
    registry.register(ChainEnd.self) { resolver in
      try closeWith(resolver, Link<Inner>.self)
      return ChainEnd()
    }
    body(Link<Inner>.self)
    return
  }
  registerChain(
    into: registry, around: Link<Inner>.self, length: length - 1, depth: depth + 1,
    closeWith: closeWith, body)
}
