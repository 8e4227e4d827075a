/// A scope's place among its parent's linked children: the sibling links of an intrusive,
/// doubly linked list (see ``ChildList``).
///
/// Guarded by the parent's state lock, like the list itself.
struct SiblingLinks {
  var next: Unmanaged<Scope>?
  var previous: Unmanaged<Scope>?
  /// Whether the scope is in its parent's list.
  var isLinked = false
}

/// The children a scope must close before itself: an intrusive list through the children's
/// ``SiblingLinks``, newest first. A scope joins its parent's list only once it owns something to
/// dispose, so a plain request scope costs its parent no lock and is freed as soon as nobody holds
/// it.
///
/// **Invariant.** The list holds exactly one retain of each linked child: taken by ``link(_:)``,
/// and either given back by ``giveBack(_:)`` after ``unlink(_:)`` said the child was linked, or
/// moved into the array ``takeAll()`` returns. Every operation runs under the parent's state lock,
/// the only place the children's sibling links are touched. So an unlinked scope has no links to
/// release when it is freed, and a linked one cannot be freed.
struct ChildList {
  private var first: Unmanaged<Scope>?

  /// Whether no child is linked.
  var isEmpty: Bool { first == nil }

  /// Links `child` (not linked yet) at the front, taking the list's retain of it.
  mutating func link(_ child: Scope) {
    let linked = Unmanaged.passRetained(child)
    if let first {
      first._withUnsafeGuaranteedRef { $0.siblings.previous = linked }
      child.siblings.next = first
    }
    first = linked
    child.siblings.isLinked = true
  }

  /// Unlinks `child` if it is linked; then the caller gives the list's retain back with
  /// ``giveBack(_:)`` once outside the lock (the release may free the child).
  ///
  /// - Returns: Whether `child` was linked.
  mutating func unlink(_ child: Scope) -> Bool {
    guard child.siblings.isLinked else { return false }
    let next = child.siblings.next
    let previous = child.siblings.previous
    if let previous {
      previous._withUnsafeGuaranteedRef { $0.siblings.next = next }
    } else {
      first = next
    }
    next?._withUnsafeGuaranteedRef { $0.siblings.previous = previous }
    child.siblings = SiblingLinks()
    return true
  }

  /// Gives back the retain the list held of a child that ``unlink(_:)`` removed.
  static func giveBack(_ child: Scope) {
    Unmanaged.passUnretained(child).release()
  }

  /// Takes every child out, newest first; the list's retains move into the returned array.
  mutating func takeAll() -> [Scope] {
    var children: [Scope] = []
    var current = first
    first = nil
    while let child = current {
      current = child._withUnsafeGuaranteedRef { child in
        let next = child.siblings.next
        child.siblings = SiblingLinks()
        return next
      }
      children.append(child.takeRetainedValue())
    }
    return children
  }
}
