/// Keeps the optimiser from folding the resolves of different service types into one function.
///
/// Every resolve is specialised in the caller's module for its service type (see ``Lookup``). For
/// two classes, those specialisations differ only in a few constants: the type's metadata accessor
/// and the functions specialised for it. Swift's function-merging pass, which runs on optimised
/// builds, folds functions that differ in at most four such constants into one function that takes
/// them as arguments and that each type's copy calls: every resolve then paid a thunk level and an
/// indirect call where it made a direct one. Measured (`strata-bench`, three alternating runs of
/// the builds without and with the marks, medians): `graph` 127.4 → 119.8 ns and
/// `graph-autowired` 128.6 → 118.8 ns (1.56× and 1.54× → 1.44× and 1.43× their hand-written
/// baselines), `singleton` 12.6 → 12.0 ns, `server-request` 302.0 → 291.9 ns.
///
/// ``token`` gives each specialisation five functions of its own, each too small for the pass to
/// consider. A resolve calls them only where it throws because its scope has begun closing
/// (``Scope/checkOpen(_:for:as:arguments:)``), never on its way to an instance. The pass needs an
/// argument for every differing constant and gives up past four, so the specialisations stay
/// apart.
///
/// Nothing depends on this for correctness: a toolchain that folds them anyway only makes resolves
/// slower again, which `strata-bench` shows (and `nm` does: a folded function's name ends in `Tm`).
@usableFromInline
enum SpecializationMarks<Service> {
  /// The five marks combined, so that none of their calls is dropped as unused.
  @inlinable @inline(__always)
  static var token: UInt { first() ^ second() ^ third() ^ fourth() ^ fifth() }

  @inlinable @inline(never)
  static func first() -> UInt { typeBits &+ 1 }

  @inlinable @inline(never)
  static func second() -> UInt { typeBits &* 3 }

  @inlinable @inline(never)
  static func third() -> UInt { typeBits ^ 5 }

  @inlinable @inline(never)
  static func fourth() -> UInt { typeBits &- 7 }

  @inlinable @inline(never)
  static func fifth() -> UInt { typeBits | 9 }

  @inlinable @inline(__always)
  static var typeBits: UInt { UInt(bitPattern: ObjectIdentifier(Service.self)) }
}

extension Scope {
  /// Throws `scopeClosed` if `scope` or any scope above it has begun closing: the first step of
  /// every resolve, from the resolve's own scope — the one a top-level resolve was called on, or
  /// the one a factory's resolver resolves from. Every registration a resolve can reach is held by
  /// that scope or an ancestor, so a closing one is found here whether it closed itself or was
  /// closed with an ancestor.
  ///
  /// The error path carries ``SpecializationMarks`` of `Service`, which keep the compiler from
  /// folding this resolve into other service types' resolves.
  @inlinable @inline(__always)
  static func checkOpen<Service, Name, each Argument>(
    _ scope: ScopeRef, for lookup: Lookup<Name>, as _: Service.Type, arguments: repeat (each Argument).Type
  ) throws {
    if isClosed(scope) {
      throw scope.with {
        $0.closedError(
          lookup, as: Service.self, arguments: repeat each arguments,
          marks: SpecializationMarks<Service>.token)
      }
    }
  }
}
