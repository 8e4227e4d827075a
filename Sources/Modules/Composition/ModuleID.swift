/// The identity of a ``Module``: its type, and optionally a value for a module with parameters.
///
/// ```swift
/// ModuleID(PersistenceModule.self)            // PersistenceModule
/// ModuleID(DatabaseModule.self, "eu-west")    // DatabaseModule("eu-west")
/// ```
public struct ModuleID: Hashable, Sendable, CustomStringConvertible {
  private let type: ObjectIdentifier
  private let typeName: String
  private let parameter: (any Hashable & Sendable)?

  /// The identity of a module without parameters: its type.
  ///
  /// ```swift
  /// var moduleID: ModuleID { ModuleID(Self.self) }
  /// ```
  ///
  /// - Parameter type: The module's type.
  public init<M: Module>(_ type: M.Type) {
    self.type = ObjectIdentifier(type)
    self.typeName = String(describing: type)
    self.parameter = nil
  }

  /// The identity of a module with parameters: its type and a value that tells its instances
  /// apart.
  ///
  /// ```swift
  /// var moduleID: ModuleID { ModuleID(Self.self, region) }
  /// ```
  ///
  /// - Parameters:
  ///   - type: The module's type.
  ///   - parameter: A value that tells instances of the type apart.
  public init<M: Module, Parameter: Hashable & Sendable>(_ type: M.Type, _ parameter: Parameter) {
    self.type = ObjectIdentifier(type)
    self.typeName = String(describing: type)
    self.parameter = parameter
  }

  /// An identity of its own, for a module that stands for others (see `Module.overridden(by:)`).
  init(composite name: String, parts: [ModuleID]) {
    self.type = ObjectIdentifier(CompositeMarker.self)
    self.typeName = name
    self.parameter = parts
  }

  private enum CompositeMarker {}

  /// `PersistenceModule`, or `DatabaseModule("eu-west")` with a parameter.
  public var description: String {
    guard let parameter else { return typeName }
    if type == ObjectIdentifier(CompositeMarker.self) { return typeName }
    if let text = parameter as? String { return "\(typeName)(\"\(text)\")" }
    return "\(typeName)(\(parameter))"
  }

  public static func == (lhs: ModuleID, rhs: ModuleID) -> Bool {
    lhs.type == rhs.type && lhs.typeName == rhs.typeName && equal(lhs.parameter, rhs.parameter)
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(type)
    if let parameter { hasher.combine(AnyHashable(parameter)) }
  }

  private static func equal(_ lhs: (any Hashable & Sendable)?, _ rhs: (any Hashable & Sendable)?) -> Bool {
    switch (lhs, rhs) {
    case (nil, nil): true
    case (let lhs?, let rhs?): AnyHashable(lhs) == AnyHashable(rhs)
    default: false
    }
  }
}
