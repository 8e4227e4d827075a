/// An object the container cannot construct itself (made by a framework, a storyboard, a test
/// runner) that receives its dependencies as one typed bundle.
///
/// ```swift
/// final class ProfileScreen: Injectable {
///   struct Dependencies {
///     let repository: UserRepository
///     let analytics: Analytics
///   }
///   private var dependencies: Dependencies?
///   func inject(_ dependencies: Dependencies) { self.dependencies = dependencies }
/// }
///
/// registry.register(ProfileScreen.Dependencies.self, ProfileScreen.Dependencies.init)  // auto-wired
/// try scope.inject(into: screen)
/// ```
public protocol Injectable: AnyObject {
  /// The bundle of everything the object needs; register it, usually auto-wired from its
  /// memberwise initializer.
  associatedtype Dependencies

  /// Receives the bundle. Called by ``Scope/inject(into:)``.
  ///
  /// - Parameter dependencies: The resolved bundle.
  func inject(_ dependencies: Dependencies)
}

extension Scope {
  /// Resolves `target`'s ``Injectable/Dependencies`` bundle from this scope and hands it over.
  ///
  /// ```swift
  /// let screen = storyboard.instantiate(ProfileScreen.self)
  /// try container.inject(into: screen)
  /// ```
  ///
  /// - Parameter target: The object to inject into.
  /// - Throws: ``ResolutionError`` if the bundle, or anything in it, cannot be resolved; the
  ///   target is then left untouched.
  public final func inject<Target: Injectable>(into target: Target) throws {
    let dependencies: Target.Dependencies
    do {
      dependencies = try resolve(Target.Dependencies.self)
    } catch let error as ResolutionError
      where error.code == .notRegistered && error.key.serviceType == Target.Dependencies.self
    {
      throw ResolutionError(
        .bundleNotRegistered(error.key, bundle: "\(Target.self).Dependencies", visible: registryChain()))
    }
    target.inject(dependencies)
  }
}
