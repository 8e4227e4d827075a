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
  ///
  /// An instance of a private class without a description of its own prints as its type, whose
  /// anonymous context Swift names by an address that moves from run to run
  /// (`App.(unknown context at $55e2e6d82408).Channel`): the context is left out (`App.Channel`).
  package static func describing(_ value: Any) -> String {
    withoutAnonymousContexts(sortedCollection(value) ?? String(describing: value))
  }

  /// `text` without the `(unknown context at $<hex>).` parts that name a private type's context.
  private static func withoutAnonymousContexts(_ text: String) -> String {
    let marker = "(unknown context at $"
    guard text.contains(marker) else { return text }
    var result = ""
    var rest = Substring(text)
    while let found = rest.firstRange(of: marker) {
      let address = rest[found.upperBound...].prefix { $0.isHexDigit }
      let after = rest[address.endIndex...]
      result += rest[..<found.lowerBound]
      if !address.isEmpty, after.hasPrefix(").") {
        rest = after.dropFirst(2)
      } else {
        result += rest[found]
        rest = rest[found.upperBound...]
      }
    }
    return result + rest
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
