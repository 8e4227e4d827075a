/// A registration's name, boxed so that the registry can store names of any type.
///
/// A name's type is part of the lookup hash; two names are compared only when their types match,
/// and then through the typed subclass (``value(as:)``, in `KeyTable.swift`), without a dynamic
/// cast.
///
/// `@unchecked Sendable`: immutable after `init`; subclasses add only a `let` of a `Sendable` type.
@usableFromInline
class AnyServiceName: @unchecked Sendable, CustomStringConvertible {
  /// `ObjectIdentifier` of the name's type, as bits; never 0.
  @usableFromInline let typeID: UInt

  init(typeID: UInt) {
    self.typeID = typeID
  }

  func isEqual(to other: AnyServiceName) -> Bool { false }

  /// The name's own `hashValue`.
  var valueHash: Int { 0 }

  @usableFromInline var description: String { "" }

  /// The name's type, as written in messages (`AppChannel`).
  var typeName: String { "" }
}

extension AnyServiceName: Equatable {
  @usableFromInline
  static func == (lhs: AnyServiceName, rhs: AnyServiceName) -> Bool { lhs.isEqual(to: rhs) }
}

@usableFromInline
final class ServiceName<Value: Hashable & Sendable>: AnyServiceName, @unchecked Sendable {
  @usableFromInline let value: Value

  init(_ value: Value) {
    self.value = value
    super.init(typeID: UInt(bitPattern: ObjectIdentifier(Value.self)))
  }

  override func isEqual(to other: AnyServiceName) -> Bool {
    other.typeID == typeID && other.value(as: Value.self) == value
  }

  /// `.primary` for an enum case, `"audit"` for a string, the value's description otherwise.
  override var valueHash: Int { value.hashValue }

  override var typeName: String { String(describing: Value.self) }

  @usableFromInline override var description: String {
    if let string = value as? String { return "\"\(string)\"" }
    let text = StableText.describing(value)
    let isEnum = Mirror(reflecting: value).displayStyle == .enum
    return isEnum ? "." + text : text
  }
}
