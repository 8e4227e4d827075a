/// Finds the near misses of a `notRegistered` key among the registrations a resolve could see:
/// what its hint suggests, as data (`ErrorMessages` words it). Runs only when somebody reads the
/// hint.
enum Hints {
  /// The closest registration to a missing key, best first.
  enum NearMiss {
    /// The service is registered with other runtime arguments (`registered`).
    case otherArguments(registered: ServiceKey)
    /// The key has no name, and the service is registered under `name`.
    case named(AnyServiceName)
    /// The key's name is `wanted`, and the service is registered under `name`.
    case otherName(AnyServiceName, wanted: AnyServiceName)
    /// The key has a name, and the service is registered without one.
    case unnamed
    /// Another type that prints as the wanted one (`Config` of another module or enclosing type)
    /// is registered: both names qualified (`registered`, `wanted`).
    case sameNamedType(registered: String, wanted: String)
    /// A service whose name extends the wanted one (`DatabaseImpl` for `Database`) is registered.
    case extendedType(String)
    /// A service whose name is a near miss of the wanted one is registered.
    case similarType(String)
    /// The wanted service is an `Optional` of a registered one (an auto-wired `Tracer?` parameter
    /// with `Tracer` registered): its name.
    case optionalOfRegistered(String)
    /// The wanted service is registered as an `Optional` of it: that `Optional`'s name.
    case registeredAsOptional(String)
    /// Nothing comes close.
    case none
  }

  static func nearMiss(for key: ServiceKey, in registries: [Registry]) -> NearMiss {
    let registered = registries.flatMap(\.registrations).map(\.key)
    let sameService = registered.filter { $0.service == key.service }

    if let other = sameService.first(where: { $0.name == key.name && $0.arguments != key.arguments })
      ?? sameService.first(where: { $0.arguments != key.arguments })
    {
      return .otherArguments(registered: other)
    }
    // A name of the wanted name's type first (`.audit` for `.app`, not `1`), and of those one
    // equal to the wanted one (its hash disagrees), or printing as it (a `nan` for `nan`), whose
    // hint says why it does not match.
    let named = sameService.filter { $0.name != nil && $0.arguments == key.arguments }
    let sameType = named.filter { $0.name?.typeID == key.name?.typeID }
    if let other = sameType.first(where: { $0.name == key.name })
      ?? sameType.first(where: { $0.name?.description == key.name?.description })
      ?? sameType.first ?? named.first,
      let name = other.name
    {
      guard let wantedName = key.name else { return .named(name) }
      return .otherName(name, wanted: wantedName)
    }
    if key.name != nil, sameService.contains(where: { $0.name == nil }) { return .unnamed }
    if let optional = optionalNearMiss(for: key, in: registered) { return optional }
    let wanted = key.service.name
    if let alike = registered.first(where: { $0.service != key.service && $0.service.name == wanted }) {
      return .sameNamedType(registered: alike.service.qualifiedName, wanted: key.service.qualifiedName)
    }
    let names = Set(registered.map(\.service.name))
    if let similar = names.sorted().first(where: { $0 != wanted && isNearMiss(wanted, $0) }) {
      return similar.hasPrefix(wanted) ? .extendedType(similar) : .similarType(similar)
    }
    return .none
  }

  /// `Optional<T>` wanted and `T` registered, or the other way round, with the wanted name and
  /// arguments: an `Optional` is a key of its own, which a resolve never unwraps.
  private static func optionalNearMiss(for key: ServiceKey, in registered: [ServiceKey]) -> NearMiss? {
    func matches(_ candidate: ServiceKey, service: Any.Type) -> Bool {
      candidate.service == TypeIdentity(service) && candidate.name == key.name
        && candidate.arguments == key.arguments
    }
    if let optional = key.service.type as? any OptionalWrapper.Type,
      let wrapped = registered.first(where: { matches($0, service: optional.wrappedType) })
    {
      return .optionalOfRegistered(wrapped.service.name)
    }
    if let optional = registered.first(where: {
      ($0.service.type as? any OptionalWrapper.Type)?.wrappedType == key.service.type
        && $0.name == key.name && $0.arguments == key.arguments
    }) {
      return .registeredAsOptional(optional.service.name)
    }
    return nil
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
