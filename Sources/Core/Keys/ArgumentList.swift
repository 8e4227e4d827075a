/// The runtime argument types of a key, as one type.
///
/// A key cannot use the tuple `(repeat each Argument)` for this: a one-element pack is its element,
/// so one tuple argument `(Int, String)` and the two arguments `Int, String` would share a key, and
/// so would one `Void` argument and none. `ArgumentList<(Int, String)>`, `ArgumentList<Int, String>`
/// and `ArgumentList<Void>` are three different types. A key without arguments uses `Void` itself,
/// so that the most common lookup compares against a constant.
@usableFromInline
struct ArgumentList<each Argument>: ArgumentListType {
  static var elementTypes: [Any.Type] {
    var types: [Any.Type] = []
    for type in repeat (each Argument).self { types.append(type) }
    return types
  }

  static var tupleType: Any.Type { (repeat each Argument).self }
}

/// What a key's description and ``ServiceKey/argumentTypes`` read from an ``ArgumentList``.
protocol ArgumentListType {
  static var elementTypes: [Any.Type] { get }
  static var tupleType: Any.Type { get }
}

/// The type that stands for the runtime argument types `Argument…` in a key: `Void` for none,
/// an ``ArgumentList`` otherwise. In specialised code this is a constant.
@inlinable @inline(__always)
func argumentListType<each Argument>(_: repeat (each Argument).Type) -> Any.Type {
  for _ in repeat (each Argument).self { return ArgumentList<repeat each Argument>.self }
  return Void.self
}

/// ``argumentListType(_:)`` as the bits a registry slot stores: 0 for no arguments (see
/// `ServiceKey.argumentBits`), so that a lookup without arguments hashes and compares a constant
/// rather than the address of `Void`'s metadata, which is known only once the program is loaded.
@inlinable @inline(__always)
func argumentListBits<each Argument>(_: repeat (each Argument).Type) -> UInt {
  guard hasArguments(repeat (each Argument).self) else { return 0 }
  return UInt(bitPattern: ObjectIdentifier(argumentListType(repeat (each Argument).self)))
}

/// Whether the pack `Argument…` has any element. In specialised code this is a constant.
@inlinable @inline(__always)
func hasArguments<each Argument>(_: repeat (each Argument).Type) -> Bool {
  for _ in repeat (each Argument).self { return true }
  return false
}

/// The argument types of a resolve with one to three runtime arguments: the trailing parameter of
/// ``Scope/resolve(_:arguments:_:)`` and its siblings, which you never pass.
///
/// Its default keeps the static type of each argument as the key's: an argument declared
/// `any Logger` is looked up as `any Logger`, as the variadic ``Scope/resolve(_:arguments:)``
/// does, rather than as the concrete type of the value inside (Swift opens an existential passed
/// to a generic parameter unless that parameter appears in another parameter's type, as here).
///
/// ```swift
/// let logger: any Logger = ConsoleLogger()
/// let report = try container.resolve(ReportBuilder.self, arguments: logger)   // key: (any Logger)
/// ```
public struct StaticArgumentTypes<Types>: Sendable {
  /// The marker; only its type matters.
  @inlinable
  public init() {}
}
