import Synchronization

// The `graph` lifetime: one instance per top-level resolve, kept in that resolve's graph cache.
extension Registration {
  @usableFromInline
  func graphShared(_ resolver: borrowing Resolver, _ arguments: repeat each Argument) throws -> Service {
    let graph = resolver.graph.cache
    let id = identity
    switch graph.entries[id] {
    case .some(.some(let box)):
      return ObjectBox.unbox(box, as: Service.self)
    case .some(.none):
      throw ResolutionError.cycle(at: key)
    case .none:
      graph.entries[id] = .some(nil)  // under construction: asking again is a cycle
      do {
        let instance = try construct(resolver, repeat each arguments)
        graph.entries[id] = ObjectBox.box(instance)
        if activation != nil { try activate(instance, resolver) }
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
