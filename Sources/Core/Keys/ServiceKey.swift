/// What a registration is found by: the service type, an optional typed name, and the types of the
/// runtime arguments passed to `resolve`.
///
/// Keys appear in errors (``ResolutionError/key``, ``ResolutionError/path``) and in
/// ``RegistrationDescriptor``. Their description reads like the code that would resolve them:
///
/// ```swift
/// print(error.key)   // Logger named .audit
/// ```
public struct ServiceKey: Hashable, Sendable, CustomStringConvertible {
  let service: TypeIdentity
  let arguments: TypeIdentity
  let name: AnyServiceName?

  init(service: TypeIdentity, arguments: TypeIdentity, name: AnyServiceName?) {
    self.service = service
    self.arguments = arguments
    self.name = name
  }

  @usableFromInline
  init<Service, each Argument>(
    _ service: Service.Type, arguments: repeat (each Argument).Type, name: AnyServiceName?
  ) {
    self.init(
      service: TypeIdentity(Service.self),
      arguments: TypeIdentity(argumentListType(repeat (each Argument).self)),
      name: name)
  }

  /// The service type, such as `UserRepository.self`.
  public var serviceType: Any.Type { service.type }

  /// The types of the runtime arguments as one tuple type; `Void` when there are none.
  ///
  /// A single argument of tuple type reads the same here as several arguments; the key itself
  /// tells them apart (see ``argumentTypeList``).
  public var argumentTypes: Any.Type {
    (arguments.type as? any ArgumentListType.Type)?.tupleType ?? arguments.type
  }

  /// The types of the runtime arguments, one element per argument; empty when there are none.
  ///
  /// ```swift
  /// registry.register(Pair.self) { (_, pair: (Int, String)) in Pair(pair) }   // [(Int, String)]
  /// registry.register(Pair.self) { (_, id: Int, label: String) in Pair(id, label) }   // [Int, String]
  /// ```
  public var argumentTypeList: [Any.Type] {
    (arguments.type as? any ArgumentListType.Type)?.elementTypes ?? []
  }

  /// Whether the key takes runtime arguments.
  public var hasArguments: Bool { arguments != .void }

  /// The argument list as registry slots store it: 0 without arguments (see `argumentListBits`).
  var argumentBits: UInt { hasArguments ? arguments.bits : 0 }

  /// Whether the key carries a name.
  public var isNamed: Bool { name != nil }

  /// This key with no runtime arguments: the same service type and name.
  package var withoutArguments: ServiceKey { ServiceKey(service: service, arguments: .void, name: name) }

  /// The name, as text (`.primary`, `"audit"`), or `nil` for an unnamed key.
  public var nameDescription: String? { name?.description }

  /// `UserRepository`, `Logger named .audit`, `Greeting with arguments (String, Int)`.
  public var description: String {
    var text = service.name
    if let name { text += " named \(name)" }
    if hasArguments { text += " with arguments \(arguments.tupleName)" }
    return text
  }

  /// The service type's name alone, for resolution paths.
  var shortDescription: String {
    var text = service.name
    if let name { text += "(\(name))" }
    return text
  }

  public static func == (lhs: ServiceKey, rhs: ServiceKey) -> Bool {
    lhs.service == rhs.service && lhs.arguments == rhs.arguments && lhs.name == rhs.name
  }

  public func hash(into hasher: inout Hasher) {
    // The types as one word (the hasher's cost grows with each word combined): the argument
    // list's bits, multiplied by an odd constant, spread over the service type's.
    hasher.combine(service.bits ^ (arguments.bits &* 0x9E37_79B9_7F4A_7C15))
    guard let name else { return }
    hasher.combine(name.typeID)
    hasher.combine(name.valueHash)
  }
}

/// A metatype with identity and a readable name.
///
/// `@unchecked Sendable`: a metatype is an immutable, process-wide value.
struct TypeIdentity: Hashable, @unchecked Sendable {
  let type: Any.Type

  init(_ type: Any.Type) {
    self.type = type
  }

  /// `Void`, the argument types of a registration without runtime arguments. Computed, not a
  /// `static let`: `Void`'s metadata is a constant the linker resolves, while a stored global of
  /// it is initialized lazily, behind a `swift_once` call on every read (four per registration).
  static var void: TypeIdentity { TypeIdentity(Void.self) }

  var bits: UInt { UInt(bitPattern: ObjectIdentifier(type)) }

  var name: String { String(describing: type) }

  /// The name with its module and enclosing types (`App.Billing.Config`): for telling apart types
  /// that print alike.
  var qualifiedName: String { String(reflecting: type) }

  /// `(String, Int)` for two arguments, `((String, Int))` for one tuple argument, `(String)`, `()`.
  var tupleName: String {
    guard let list = type as? any ArgumentListType.Type else { return "()" }
    return "(" + list.elementTypes.map { String(describing: $0) }.joined(separator: ", ") + ")"
  }

  /// ``tupleName`` with each type's module and enclosing types (`(App.Billing.Config)`).
  var qualifiedTupleName: String {
    guard let list = type as? any ArgumentListType.Type else { return "()" }
    return "(" + list.elementTypes.map { String(reflecting: $0) }.joined(separator: ", ") + ")"
  }

  static func == (lhs: TypeIdentity, rhs: TypeIdentity) -> Bool {
    ObjectIdentifier(lhs.type) == ObjectIdentifier(rhs.type)
  }

  func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(type)) }
}
