import Synchronization

/// The `graph` lifetime: one instance per top-level resolve, kept in that resolve's graph cache.
@usableFromInline
enum GraphStorage: LifetimeStorage {
  @usableFromInline static var home: InstanceHome { .resolve }
  @usableFromInline static var disposer: Disposer { .caller }

  @usableFromInline
  static func instance<Service, each Argument>(
    of registration: Registration<Service, repeat each Argument>, _ resolver: borrowing Resolver,
    owner: ScopeRef, _ arguments: repeat each Argument
  ) throws -> Service {
    // With runtime arguments, each resolve makes its own instance: the cache is keyed by the
    // registration, and one instance for every set of arguments gave the first arguments' instance
    // to the others (arguments need not be comparable, so they cannot be part of the key).
    if hasArguments(repeat (each Argument).self) {
      return try TransientStorage.instance(of: registration, resolver, owner: owner, repeat each arguments)
    }
    let graph = resolver.graph.cache
    let id = registration.identity
    switch graph.entries[id] {
    case .some(.some(let box)):
      return ObjectBox.unbox(box, as: Service.self)
    case .some(.none):
      throw ResolutionError.cycle(at: registration.key)
    case .none:
      graph.entries[id] = .some(nil)  // under construction: asking again is a cycle
      do {
        let instance = try registration.construct(resolver, repeat each arguments)
        graph.entries[id] = ObjectBox.box(instance)
        if registration.activation != nil { try registration.activate(instance, resolver) }
        return instance
      } catch {
        graph.entries[id] = nil
        throw error
      }
    }
  }
}

/// The per-resolve cache behind the `graph` lifetime.
///
/// Not `Sendable`: it belongs to one top-level resolve, on one thread.
@usableFromInline
package final class GraphCache {
  /// `nil` value: the entry is under construction.
  var entries: [UInt: AnyObject?] = [:]

  @usableFromInline init() {}
}
