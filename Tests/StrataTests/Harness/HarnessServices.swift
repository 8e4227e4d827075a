import Foundation
import Strata

// The fixed pool of service types the harness generates registrations with.

/// What the harness knows about one instance a factory made: which registration made it, which
/// instances its factory received as dependencies, and in which scope the factory ran.
struct InstanceInfo: Sendable {
  /// The generator's number of the registration whose factory made the instance.
  let registration: Int
  /// The index of the instance's service type in ``ServicePool``.
  let type: Int
  /// The instance numbers of the dependencies the factory resolved, in order.
  let dependencies: [Int]
  /// The name of `Resolver.currentScope` while the factory ran (the driver names every scope
  /// uniquely, so that a freed scope's reused address never confuses two scopes).
  let factoryScope: String?
}

/// Numbers every instance the harness's factories make and logs every disposal, in order.
///
/// `@unchecked Sendable`: every stored property is read and written only under `lock`.
final class Recorder: @unchecked Sendable {
  private let lock = NSLock()
  private var infos: [Int: InstanceInfo] = [:]
  private var disposalLog: [Int] = []

  /// Numbers a new instance and records what made it.
  func create(_ info: InstanceInfo) -> Int {
    lock.withLock {
      let id = infos.count + 1
      infos[id] = info
      return id
    }
  }

  /// Logs the disposal of instance `id`.
  func disposed(_ id: Int) {
    lock.withLock { disposalLog.append(id) }
  }

  /// What made instance `id`.
  func info(_ id: Int) -> InstanceInfo? {
    lock.withLock { infos[id] }
  }

  /// Every disposal so far, oldest first.
  var disposals: [Int] {
    lock.withLock { disposalLog }
  }
}

/// A service of the pool: it knows its instance number.
protocol HarnessService: Sendable {
  /// The index of this type in ``ServicePool/types``.
  static var typeIndex: Int { get }
  /// Whether a scope disposes instances of this type.
  static var isDisposable: Bool { get }
  /// The instance number the ``Recorder`` gave this instance.
  var id: Int { get }
  init(id: Int, recorder: Recorder)
}

/// A marker type that makes `Svc<Tag>` a distinct service type.
protocol ServiceTag: Sendable {
  static var index: Int { get }
}

enum Tag0: ServiceTag { static var index: Int { 0 } }
enum Tag1: ServiceTag { static var index: Int { 1 } }
enum Tag2: ServiceTag { static var index: Int { 2 } }
enum Tag3: ServiceTag { static var index: Int { 3 } }
enum Tag4: ServiceTag { static var index: Int { 4 } }
enum Tag5: ServiceTag { static var index: Int { 5 } }
enum Tag6: ServiceTag { static var index: Int { 6 } }
enum Tag7: ServiceTag { static var index: Int { 7 } }

/// A disposable class service; one distinct type per tag.
final class Svc<Tag: ServiceTag>: HarnessService, Disposable {
  static var typeIndex: Int { Tag.index }
  static var isDisposable: Bool { true }
  let id: Int
  private let recorder: Recorder

  init(id: Int, recorder: Recorder) {
    self.id = id
    self.recorder = recorder
  }

  func dispose() throws {
    recorder.disposed(id)
  }
}

/// A value-type service, not disposable: `weak` must reject it, other lifetimes box it.
struct ValueSvc: HarnessService {
  static var typeIndex: Int { 8 }
  static var isDisposable: Bool { false }
  let id: Int

  init(id: Int, recorder _: Recorder) {
    self.id = id
  }
}

/// A typed registration name. `index` gives any number of distinct keys of one service type.
enum HarnessName: Hashable, Sendable {
  case alpha
  case beta
  case index(Int)
}

/// A second name type whose case prints like ``HarnessName/alpha`` and must never match it.
enum OtherName: Hashable, Sendable {
  case alpha
}

/// Custom scope tags of the harness.
extension ScopeTag {
  static let tenant = ScopeTag("harness.tenant")
}

/// The error a generated factory throws when its registration is marked failing.
struct HarnessFactoryFailure: Error {}
