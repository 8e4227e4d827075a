import Synchronization

/// The `naive` baseline: what a simple container does. One dictionary from `ObjectIdentifier` to
/// factory behind a lock (plus one keyed by type and name, and one by type and argument types),
/// instances returned as existentials and cast back with `as!`. Factories run outside the lock,
/// so that they can resolve their own dependencies through the container.
final class NaiveContainer: Sendable {
  typealias Factory = @Sendable (NaiveContainer) throws -> any Sendable
  typealias ArgumentFactory = @Sendable (NaiveContainer, Any) throws -> any Sendable

  /// A registration: a factory, or a singleton's factory and, once made, its instance.
  private enum Entry: Sendable {
    case transient(Factory)
    case singleton(Factory)
    case instance(any Sendable)
  }

  /// `@unchecked Sendable`: `name` wraps a `Hashable & Sendable` value (see `register`).
  private struct NamedKey: Hashable, @unchecked Sendable {
    let service: ObjectIdentifier
    let name: AnyHashable
  }

  private struct ArgumentsKey: Hashable, Sendable {
    let service: ObjectIdentifier
    let arguments: ObjectIdentifier
  }

  private enum Key: Sendable {
    case plain(ObjectIdentifier)
    case named(NamedKey)
  }

  private struct State {
    var plain: [ObjectIdentifier: Entry] = [:]
    var named: [NamedKey: Entry] = [:]
    var withArguments: [ArgumentsKey: ArgumentFactory] = [:]

    subscript(key: Key) -> Entry? {
      get {
        switch key {
        case .plain(let id): plain[id]
        case .named(let key): named[key]
        }
      }
      set {
        switch key {
        case .plain(let id): plain[id] = newValue
        case .named(let key): named[key] = newValue
        }
      }
    }
  }

  /// What `resolve` throws for a type nobody registered.
  struct NotRegistered: Error {}

  private let state = Mutex(State())

  /// Registers a factory, transient unless `singleton`.
  func register<Service: Sendable>(
    _ type: Service.Type, singleton: Bool = false,
    factory: @escaping @Sendable (NaiveContainer) throws -> Service
  ) {
    let entry: Entry = singleton ? .singleton(factory) : .transient(factory)
    state.withLock { $0.plain[ObjectIdentifier(type)] = entry }
  }

  /// Registers a transient factory under a name.
  func register<Service: Sendable, Name: Hashable & Sendable>(
    _ type: Service.Type, name: Name, factory: @escaping @Sendable (NaiveContainer) throws -> Service
  ) {
    let key = NamedKey(service: ObjectIdentifier(type), name: AnyHashable(name))
    state.withLock { $0.named[key] = .transient(factory) }
  }

  /// Registers a transient factory taking two runtime arguments.
  func register<Service: Sendable, First, Second>(
    _ type: Service.Type,
    factory: @escaping @Sendable (NaiveContainer, First, Second) throws -> Service
  ) {
    let key = ArgumentsKey(
      service: ObjectIdentifier(type), arguments: ObjectIdentifier((First, Second).self))
    state.withLock {
      $0.withArguments[key] = { container, arguments in
        let (first, second) = arguments as! (First, Second)
        return try factory(container, first, second)
      }
    }
  }

  func resolve<Service>(_ type: Service.Type) throws -> Service {
    try resolve(.plain(ObjectIdentifier(type))) as! Service
  }

  func resolve<Service, Name: Hashable & Sendable>(_ type: Service.Type, name: Name) throws -> Service {
    try resolve(.named(NamedKey(service: ObjectIdentifier(type), name: AnyHashable(name)))) as! Service
  }

  func resolve<Service, First, Second>(
    _ type: Service.Type, arguments first: First, _ second: Second
  ) throws -> Service {
    let key = ArgumentsKey(
      service: ObjectIdentifier(type), arguments: ObjectIdentifier((First, Second).self))
    guard let factory = state.withLock({ $0.withArguments[key] }) else { throw NotRegistered() }
    return try factory(self, (first, second)) as! Service
  }

  private func resolve(_ key: Key) throws -> any Sendable {
    switch state.withLock({ $0[key] }) {
    case .instance(let instance)?:
      return instance
    case .transient(let factory)?:
      return try factory(self)
    case .singleton(let factory)?:
      let made = try factory(self)
      return state.withLock { state in
        if case .instance(let existing)? = state[key] { return existing }
        state[key] = .instance(made)
        return made
      }
    case nil:
      throw NotRegistered()
    }
  }
}

/// The error the `manual` baseline of `failed-resolve` throws: the least a failure can cost.
struct TrivialError: Error {}

/// Fails like a missing registration would, as cheaply as Swift allows.
@inline(never)
func failManually() throws -> Foo {
  throw TrivialError()
}
