/// Text for values that messages, validation reports and graph exports show, the same in every
/// process.
package enum StableText {
  /// `String(describing: value)`, except that a `Set`'s elements and a `Dictionary`'s entries are
  /// sorted by their text: their own order follows the process's random hash seed, and names and
  /// module parameters printed in that order made exports differ from run to run.
  ///
  /// ```swift
  /// StableText.describing(Set(["eu", "us", "ap"]))   // ["ap", "eu", "us"]
  /// ```
  package static func describing(_ value: Any) -> String {
    sortedCollection(value) ?? String(describing: value)
  }

  /// A set's or dictionary's text with sorted elements; `nil` for any other value.
  private static func sortedCollection(_ value: Any) -> String? {
    let mirror = Mirror(reflecting: value)
    switch mirror.displayStyle {
    case .set:
      return "[" + mirror.children.map { element($0.value) }.sorted().joined(separator: ", ") + "]"
    case .dictionary:
      let entries = mirror.children.map { child -> String in
        let pair = Mirror(reflecting: child.value).children.map(\.value)
        guard pair.count == 2 else { return element(child.value) }
        return element(pair[0]) + ": " + element(pair[1])
      }
      return entries.isEmpty ? "[:]" : "[" + entries.sorted().joined(separator: ", ") + "]"
    default:
      return nil
    }
  }

  /// An element as a collection prints it (`"eu"` with its quotes), sets and dictionaries sorted.
  private static func element(_ value: Any) -> String {
    sortedCollection(value) ?? String(reflecting: value)
  }
}
