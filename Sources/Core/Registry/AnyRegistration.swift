import Synchronization

/// The last registration number handed out (see `AnyRegistration.identity`).
private let registrationNumbers = Atomic<UInt>(0)

/// What every registration has, whatever its service and argument types: the facts a validator,
/// a graph export or an error message needs.
///
/// `@unchecked Sendable`: every stored property is a `let` except `previous`, which the registry
/// writes once, and `attributes`, which the registrar's thread writes while the batch is open
/// (a declaration, a module's attribution, an override flag, materializing a forward), both
/// before publishing the snapshot that makes this registration visible (the atomic release of
/// that publication orders the writes before every reader's acquire).
@usableFromInline
class AnyRegistration: @unchecked Sendable {
  @usableFromInline let key: ServiceKey
  /// A number that no other registration of this process ever has, with the two low bits clear:
  /// what a scope files this registration's cached instance under. (Not the object's address: a
  /// registration made by a closed child scope is freed, and the next one may get its address.)
  @usableFromInline let identity: UInt
  @usableFromInline let kind: Lifetime.Kind
  /// The id of `lifetime.scopeTag`; 0 when the lifetime names no tag (tag ids start at 1).
  @usableFromInline let scopeTagID: Int
  let location: SourceLocation
  /// Lists the keys the factory resolves, when they are known without running it (auto-wired
  /// initializers and forwards); returns `nil` for a closure factory. A function rather than the
  /// list, because only tools read it: the fixed-arity auto-wiring passes a function without
  /// context, so registering allocates no array.
  let dependencyKeys: DependencyKeys
  /// The registration this one replaced as the latest for its key.
  var previous: AnyRegistration?
  /// Its module, override flag and declared dependencies (see `RegistrationAttributes`).
  ///
  /// No dynamic exclusivity check (two per registration while a module's registrations are
  /// attributed to it, more when a declaration is recorded): written only while the batch is open,
  /// by the thread running the registrar's closure, and by no code that also reads it meanwhile.
  @exclusivity(unchecked) var attributes = RegistrationAttributes()

  @usableFromInline typealias DependencyKeys = @Sendable () -> [ServiceKey]?

  /// Whether the registration takes runtime arguments and shares its instances, which is invalid
  /// (a shared instance cannot depend on the arguments of the resolve that made it).
  final var isSharedWithArguments: Bool { key.hasArguments && lifetime.isShared }

  /// How long instances live, made again from `kind` and `scopeTagID` (which is all a
  /// ``Lifetime`` holds) rather than stored beside them: 24 bytes less in every registration, the
  /// object a container of 10,000 registrations touches 10,000 times over when it is freed.
  var lifetime: Lifetime {
    Lifetime(kind, scopeTag: scopeTagID == 0 ? nil : ScopeTag(builtIn: scopeTagID))
  }

  /// The keys the factory resolves, if known (see ``dependencyKeys``).
  var dependencies: [ServiceKey]? { dependencyKeys() }

  init(key: ServiceKey, lifetime: Lifetime, location: SourceLocation, dependencies: @escaping DependencyKeys)
  {
    self.key = key
    self.identity = registrationNumbers.add(1, ordering: .relaxed).newValue << 2
    self.kind = lifetime.kind
    self.scopeTagID = lifetime.scopeTag?.id ?? 0
    self.location = location
    self.dependencyKeys = dependencies
  }

  /// Throws `depthLimitExceeded`: a resolve `depth` levels deep may not run this registration's
  /// factory, for too many levels or too little stack left on this thread. (The error reads as a
  /// `cycle` once its path shows a key twice.) Kept out of line: the check is inlined, the error
  /// rare.
  @usableFromInline @inline(never)
  final func stopTooDeep(_ depth: Int) throws -> Never {
    throw ResolutionError.tooDeep(at: key, depth: depth)
  }

  /// Checks a staged registration and appends it, with whatever it adds, to `batch`. Overridden
  /// by ``Registration`` (see `ServiceRegistration.swift`).
  func materialize(into batch: inout [AnyRegistration]) throws { batch.append(self) }

  /// A registration for this one's key that throws `invalidRegistration` for `reason`. Every
  /// registration is a ``Registration``, which overrides this; the base has no service type to
  /// make one with, and answers with a transient that throws `reason` under the same key.
  func failing(_ reason: ResolutionError.Reason) -> AnyRegistration {
    RegistrationBatch.failing(Never.self, key: key, at: location, reason: reason)
  }

  /// How many forwards materializing this registration appended right after it. Overridden by
  /// ``Registration``.
  var forwardCount: Int { 0 }

  /// The forwards of this registration made again for `replacement`, which replaces it before
  /// publication; `nil` if it has none. Overridden by ``Registration``.
  func forwards(madeFor replacement: AnyRegistration) -> [AnyRegistration]? { nil }

  /// Makes an eager singleton's instance now. Overridden by ``Registration``.
  func createEagerly(in scope: Scope) throws {}

  /// Whether this is the registration of a ready-made instance, which Strata never makes (read
  /// while its batch is open, before any instance of a factory registration can exist).
  /// Overridden by ``Registration``.
  var isReadyMade: Bool { false }

  /// Drops a created singleton when the scope holding this registration closed. Overridden by
  /// ``Registration``.
  func releaseSharedInstance() {}

  /// After a shared instance was made: releases it if `owner` began closing meanwhile. A close
  /// does not wait for a factory that runs (see `Registration.releaseSharedInstance()`), so the
  /// instance must not stay cached in the closed scope. The fence orders the creation lock's
  /// release before the load of the flag, as the close's fence orders its flag before its attempt
  /// at the lock: one of the two sees the other.
  ///
  /// `owner`'s own flag, not `isClosed` (which also sees a closing ancestor): until `owner`
  /// itself is closing, its cache readers do not stop at the flag, so clearing the cell under
  /// them could free what one is retaining; `owner`'s own close, which an ancestor's close runs,
  /// releases the instance then.
  @usableFromInline
  final func releaseIfClosing(_ owner: Scope) {
    atomicMemoryFence(ordering: .sequentiallyConsistent)
    if owner.isClosing { owner.releaseLateSingleton(self) }
  }

  var descriptor: RegistrationDescriptor {
    RegistrationDescriptor(
      key: key, lifetime: lifetime, registeredAt: location, rawDependencies: dependencies,
      attributes: attributes, identity: identity)
  }
}

/// A public, read-only description of one registration, for tools such as graph validation and
/// export.
///
/// ```swift
/// for registration in container.registrations {
///   print(registration.key, registration.lifetime, registration.registeredAt)
/// }
/// ```
public struct RegistrationDescriptor: Sendable, CustomStringConvertible {
  /// The key the registration is found by.
  public let key: ServiceKey
  /// How long its instances live.
  public let lifetime: Lifetime
  /// Where it was registered.
  public let registeredAt: SourceLocation
  /// The keys its factory resolves, now or later, when known without running it: the parameters
  /// of an auto-wired initializer, the target of a forward, or what a closure factory declared with
  /// `dependsOn:`. A `Lazy<T>` or `Provider<T>` parameter is recorded as `T` (see ``edges``, which
  /// tells such deferred dependencies apart). `nil` for a closure factory that declared nothing.
  public var dependencies: [ServiceKey]? { edges?.map(\.key) }
  /// The keys as the registration recorded them (`Lazy<T>` as itself).
  let rawDependencies: [ServiceKey]?
  package let attributes: RegistrationAttributes
  /// The registration's unique number (`AnyRegistration.identity`): tells apart two registrations
  /// of one key.
  package let identity: UInt

  /// `UserService (singleton) at App/Setup.swift:12`.
  public var description: String { "\(key) (\(lifetime)) at \(registeredAt)" }
}
