/// The kind of a scope: `.root`, `.session`, `.request`, or one of your own.
///
/// Tags let a registration say which scope owns its instances (`Lifetime.scoped(.request)`), and
/// they appear in error messages. Declare your own like this:
///
/// ```swift
/// extension ScopeTag {
///   static let batch = ScopeTag("batch")
/// }
/// let scope = try container.makeScope(.batch)
/// ```
public struct ScopeTag: Hashable, Sendable, CustomStringConvertible {
  /// A number unique to the name in this process, so that comparing tags compares integers.
  ///
  /// The tag holds nothing else: copying it, and making or freeing a scope that stores it, touch
  /// no reference count.
  @usableFromInline let id: Int

  /// Creates a tag.
  ///
  /// Tags are meant to be made once, as static constants; making one looks its name up in a
  /// process-wide table.
  ///
  /// - Parameter name: A name that identifies the tag. Two tags with the same name are equal.
  public init(_ name: String) {
    self.id = TagNumbers.shared.number(for: name)
  }

  /// A built-in tag, numbered in advance (see `TagNumbers.builtIn`).
  @inlinable init(builtIn id: Int) {
    self.id = id
  }

  /// The tag's name, as shown in error messages.
  public var name: String { TagNumbers.shared.name(of: id) }

  public static func == (lhs: ScopeTag, rhs: ScopeTag) -> Bool { lhs.id == rhs.id }

  public func hash(into hasher: inout Hasher) { hasher.combine(id) }

  // The built-in tags are constants, so that `makeScope(.request)` reads no global.

  /// The tag of a ``Container``, the root of every scope tree.
  @inlinable public static var root: ScopeTag { ScopeTag(builtIn: 1) }
  /// A scope that lives as long as a user session.
  @inlinable public static var session: ScopeTag { ScopeTag(builtIn: 2) }
  /// A scope that lives as long as one request.
  @inlinable public static var request: ScopeTag { ScopeTag(builtIn: 3) }

  /// `.request`, `.session`, or the custom name with a leading dot.
  public var description: String { "." + name }
}

/// The number of each tag name made so far, and the name of each number.
///
/// `@unchecked Sendable`: `numbers` and `names` are read and written only under `lock`.
private final class TagNumbers: @unchecked Sendable {
  static let shared = TagNumbers()
  private let lock = Lock()
  /// `names[id - 1]` is the name numbered `id`; the built-in tags' numbers are fixed here.
  private var names = ["root", "session", "request"]
  private var numbers = ["root": 1, "session": 2, "request": 3]

  func number(for name: String) -> Int {
    lock.withLock {
      if let id = numbers[name] { return id }
      names.append(name)
      numbers[name] = names.count
      return names.count
    }
  }

  func name(of id: Int) -> String {
    lock.withLock { names.indices.contains(id - 1) ? names[id - 1] : "tag#\(id)" }
  }
}
