import Strata

/// The identity of a ``Module``: its type, and optionally a value for a module with parameters.
///
/// ```swift
/// ModuleID(PersistenceModule.self)            // PersistenceModule
/// ModuleID(DatabaseModule.self, "eu-west")    // DatabaseModule("eu-west")
/// ```
///
/// Making one is cheap (a module's `moduleID` is read several times per installation): the type's
/// name, which only messages and ``description`` need, is looked up when it is first read and then
/// remembered for the process.
public struct ModuleID: Hashable, Sendable, CustomStringConvertible {
  private let type: Any.Type
  /// The name of a composition (see `init(composite:parts:)`); `nil` for a module's own type.
  private let compositeName: String?
  private let parameter: (any Hashable & Sendable)?

  /// The identity of a module without parameters: its type.
  ///
  /// ```swift
  /// var moduleID: ModuleID { ModuleID(Self.self) }
  /// ```
  ///
  /// - Parameter type: The module's type.
  public init<M: Module>(_ type: M.Type) {
    self.type = type
    self.compositeName = nil
    self.parameter = nil
  }

  /// The identity of a module with parameters: its type and a value that tells its instances
  /// apart. Two such identities are equal when their types are and their parameters are equal
  /// values of one type (`1` and `1 as UInt8` are different parameters).
  ///
  /// ```swift
  /// var moduleID: ModuleID { ModuleID(Self.self, region) }
  /// ```
  ///
  /// - Parameters:
  ///   - type: The module's type.
  ///   - parameter: A value that tells instances of the type apart.
  public init<M: Module, Parameter: Hashable & Sendable>(_ type: M.Type, _ parameter: Parameter) {
    self.type = type
    self.compositeName = nil
    self.parameter = parameter
  }

  /// An identity of its own, for a module that stands for others (see `Module.overridden(by:)`).
  init(composite name: String, parts: [ModuleID]) {
    self.type = CompositeMarker.self
    self.compositeName = name
    self.parameter = parts
  }

  private enum CompositeMarker {}

  /// The module type's name as messages show it, or the composition's name.
  private var typeName: String { compositeName ?? TypeNames.name(of: type) }

  /// `PersistenceModule`, or `DatabaseModule("eu-west")` with a parameter.
  public var description: String {
    guard let parameter, compositeName == nil else { return typeName }
    if let text = parameter as? String { return "\(typeName)(\"\(text)\")" }
    return "\(typeName)(\(StableText.describing(parameter)))"
  }

  public static func == (lhs: ModuleID, rhs: ModuleID) -> Bool {
    ObjectIdentifier(lhs.type) == ObjectIdentifier(rhs.type) && lhs.compositeName == rhs.compositeName
      && equal(lhs.parameter, rhs.parameter)
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(ObjectIdentifier(type))
    // The parameter's own hash, not `AnyHashable`'s: boxing it costs a dynamic cast, and a
    // dictionary of module identities rehashes every key as it grows.
    parameter?.hash(into: &hasher)
  }

  private static func equal(_ lhs: (any Hashable & Sendable)?, _ rhs: (any Hashable & Sendable)?) -> Bool {
    switch (lhs, rhs) {
    case (nil, nil): true
    case (let lhs?, let rhs?): sameValue(lhs, rhs)
    default: false
    }
  }

  /// Whether `rhs` is a `Value` equal to `lhs`: parameters of different types are different
  /// values (unlike `AnyHashable`, which calls `1 as Int` and `1 as UInt8` equal), which keeps
  /// equality consistent with ``hash(into:)``.
  ///
  /// The dynamic types are compared before the cast: `as?` also succeeds by wrapping or
  /// unwrapping an `Optional` (`1` cast to `Int?`), whose hash differs from the value's, so `1`
  /// and `Optional(1)` were equal identities with different hashes.
  private static func sameValue<Value: Hashable>(_ lhs: Value, _ rhs: any Hashable & Sendable) -> Bool {
    guard ObjectIdentifier(Swift.type(of: lhs)) == ObjectIdentifier(Swift.type(of: rhs)),
      let rhs = rhs as? Value
    else {
      return false
    }
    return lhs == rhs
  }
}

/// The names of module types, as `String(describing:)` gives them (which reflects on the type, a
/// few thousand instructions), each computed once for the process.
///
/// `@unchecked Sendable`: `names` is read and written only under `lock`. (Strata's `Lock`, a
/// pthread mutex, rather than `Mutex`: ThreadSanitizer does not see the ordering of the
/// prebuilt `Synchronization` module's lock, and reported its guarded writes as a race.)
private final class TypeNames: @unchecked Sendable {
  private static let shared = TypeNames()
  private let lock = Lock()
  private var names: [ObjectIdentifier: String] = [:]

  static func name(of type: Any.Type) -> String {
    let id = ObjectIdentifier(type)
    if let known = shared.lock.withLock({ shared.names[id] }) { return known }
    let name = String(describing: type)
    shared.lock.withLock { shared.names[id] = name }
    return name
  }
}

extension ModuleID {
  /// This module as registrations record it: by identity, with its name for messages.
  var attribution: ModuleAttribution { ModuleAttribution(name: { description }, identity: self) }
}
