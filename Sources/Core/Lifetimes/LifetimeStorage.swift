/// What one lifetime does with instances: one type per lifetime, each in its own file of this
/// folder.
///
/// | Type | Lifetime | Where the instance lives | Who disposes of it |
/// |---|---|---|---|
/// | ``TransientStorage`` | `transient` | nowhere: the caller owns it | nobody (the caller) |
/// | ``SingletonStorage`` | `singleton`, `eagerSingleton` | the registration's ``SharedInstanceCell`` | the scope that registered it |
/// | ``WeakStorage`` | `weak` | a weak reference in the registration | nobody (freed with its last holder) |
/// | ``GraphStorage`` | `graph` | the top-level resolve's ``GraphCache`` | nobody (the caller) |
/// | ``ScopedStorage`` | `scoped` | a slot of the owning scope | the owning scope, when it closes |
///
/// `Registration.instance` looks for an instance that exists already (a created singleton, a
/// scoped instance), then dispatches on its lifetime to one of these, statically: no protocol
/// witness is called on the resolve path.
@usableFromInline
protocol LifetimeStorage {
  /// Where an instance of this lifetime is kept between resolves.
  static var home: InstanceHome { get }
  /// Who disposes of an instance of this lifetime that is `Disposable` or `AsyncDisposable`.
  static var disposer: Disposer { get }
  /// Finds or makes the instance for a resolve that reached `registration` through `resolver`
  /// and found none ready. `owner` is the scope whose registry holds the registration.
  static func instance<Service, each Argument>(
    of registration: Registration<Service, repeat each Argument>, _ resolver: borrowing Resolver,
    owner: ScopeRef, _ arguments: repeat each Argument
  ) throws -> Service
}

/// Where a lifetime keeps its instances (see ``LifetimeStorage``).
@usableFromInline
enum InstanceHome: Sendable {
  case nowhere, registration, weakReference, resolve, owningScope
}

/// Who disposes of a lifetime's instances (see ``LifetimeStorage``).
@usableFromInline
enum Disposer: Sendable {
  case caller, registeringScope, owningScope
}

extension Lifetime.Kind {
  /// The storage type of this lifetime.
  var storage: any LifetimeStorage.Type {
    switch self {
    case .transient: TransientStorage.self
    case .singleton, .eagerSingleton: SingletonStorage.self
    case .weak: WeakStorage.self
    case .graph: GraphStorage.self
    case .scoped: ScopedStorage.self
    }
  }
}
