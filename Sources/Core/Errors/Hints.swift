/// Works out the hint of a `notRegistered` error: the near misses among the registrations a
/// resolve could see. Runs only when somebody reads the hint.
enum Hints {
  static func forMissing(_ key: ServiceKey, in registries: [Registry]) -> String {
    let registered = registries.flatMap(\.registrations).map(\.key)
    let sameService = registered.filter { $0.service == key.service }

    if let other = sameService.first(where: { $0.name == key.name && $0.arguments != key.arguments })
      ?? sameService.first(where: { $0.arguments != key.arguments })
    {
      return "`\(key.service.name)` is registered with arguments \(other.arguments.tupleName), "
        + "resolved with \(key.arguments.tupleName)"
    }
    if let other = sameService.first(where: { $0.name != nil && $0.arguments == key.arguments }),
      let name = other.name
    {
      guard let wantedName = key.name else {
        return "a registration named `\(name)` exists; resolve it with `name: \(name)`"
      }
      return "`\(key.service.name)` is registered under the name `\(name)`, not `\(wantedName)`"
    }
    if key.name != nil, sameService.contains(where: { $0.name == nil }) {
      return "an unnamed registration of `\(key.service.name)` exists; resolve it without a name"
    }
    let wanted = key.service.name
    let names = Set(registered.map(\.service.name))
    if let similar = names.sorted().first(where: { $0 != wanted && isNearMiss(wanted, $0) }) {
      if similar.hasPrefix(wanted) {
        return "`\(similar)` is registered; did you mean to register it as `\(wanted)` "
          + "(`.forwarding(to: \(wanted).self)`) or to resolve `\(similar)`?"
      }
      return "did you mean `\(similar)`? It is registered; `\(wanted)` is not"
    }
    return "register it, e.g. `registry.register(\(wanted).self) { resolver in … }`, or check that "
      + "the module providing it is loaded in this scope or one above it"
  }

  /// One name extends the other (`UserRepository`, `UserRepositoryImpl`), or they differ by at
  /// most two edits.
  static func isNearMiss(_ lhs: String, _ rhs: String) -> Bool {
    if lhs.count >= 4 && rhs.count >= 4 && (lhs.hasPrefix(rhs) || rhs.hasPrefix(lhs)) { return true }
    return editDistance(Array(lhs), Array(rhs), limit: 2) <= 2
  }

  private static func editDistance(_ lhs: [Character], _ rhs: [Character], limit: Int) -> Int {
    guard abs(lhs.count - rhs.count) <= limit else { return limit + 1 }
    var previous = Array(0...rhs.count)
    for (i, left) in lhs.enumerated() {
      var current = [i + 1] + Array(repeating: 0, count: rhs.count)
      for (j, right) in rhs.enumerated() {
        current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (left == right ? 0 : 1))
      }
      previous = current
    }
    return previous[rhs.count]
  }
}
