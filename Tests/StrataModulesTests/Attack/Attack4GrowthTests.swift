import Foundation
import Strata
import StrataModules
import Testing

/// A plugin, one per index; registers one named value.
private struct PluginModule: Module {
  let index: Int
  var moduleID: ModuleID { ModuleID(Self.self, index) }
  func register(in registry: Registrar) {
    registry.register(Int.self, name: index) { _ in 1 }
  }
}

/// A per-session feature: one session-scoped value.
private struct SessionFeatureModule: Module {
  func register(in registry: Registrar) {
    registry.register(String.self, lifetime: .scoped(.session)) { _ in "feature" }
  }
}

/// The process's resident memory, from `/proc/self/statm`.
private func residentBytes() -> Int {
  let text = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
  let fields = text.split(separator: " ")
  let pages = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
  return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Whether a sanitizer's runtime is loaded: its shadow memory and quarantine make resident memory
/// say nothing about what the code keeps.
private let runsUnderSanitizer = dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil

/// What installing modules one at a time into a live container costs, against DESIGN.md
/// invariant 7: "registering N services in batches is O(N) time and O(N log N) memory at worst,
/// whatever the batch sizes".
@Suite struct Attack4GrowthTests {
  /// A thousand plugins installed one at a time (an app loading plugins as they are found) keep
  /// their memory small: the same thousand registrations made one `register` batch at a time
  /// cost no measurable memory. Measured on the unfixed code: about 70 MiB for 1,000 plugins and
  /// about 280 MiB for 2,000 (quadratic), and 1.3 s against 0.16 s for the same registrations
  /// made through `Scope.register`. Each installation keeps a table of every module installed
  /// before it (`ModuleInstallation.LoadedBefore`), retained by its `PendingHook` in the scope's
  /// installed identities for the scope's life.
  @Test(
    .disabled("BUG: N one-module installations retain O(N²) memory (LoadedBefore tables kept by PendingHook)")
  )
  func aThousandPluginsInstalledOneAtATimeKeepTheirMemorySmall() throws {
    let container = Container()
    defer { try? container.close() }
    let before = residentBytes()
    for index in 0..<1000 { try container.install(PluginModule(index: index)) }
    let grown = residentBytes() - before
    #expect(grown < 24 << 20, "installing 1,000 plugins one at a time grew memory by \(grown >> 20) MiB")
    #expect(container.installedModules.count == 1000)
  }

  /// The same thousand plugins in one installation, and the same registrations one batch at a
  /// time outside modules, both stay small: the growth above is the module layer's.
  @Test(.enabled(if: !runsUnderSanitizer, "resident memory means little under a sanitizer"))
  func aThousandPluginsInOneInstallationOrThousandRegisterBatchesStaySmall() throws {
    let container = Container()
    defer { try? container.close() }
    let before = residentBytes()
    try container.install((0..<1000).map { PluginModule(index: $0) })
    let plain = Container()
    defer { try? plain.close() }
    for index in 0..<1000 { try plain.register { $0.register(Int.self, name: index) { _ in 1 } } }
    let grown = residentBytes() - before
    #expect(grown < 64 << 20, "grew by \(grown >> 20) MiB")
    #expect(try container.resolve(Int.self, name: 999) == 1)
    #expect(try plain.resolve(Int.self, name: 999) == 1)
  }

  /// A thousand live sessions, each with one small feature module, over a container of 300
  /// modules (a server's sessions with a checkout feature): each session keeps a table of the
  /// container's 300 module identities for its life. Measured on the unfixed code: about 35 MiB
  /// (35 KB a session); the same sessions with the feature's registration made outside modules
  /// showed no measurable growth.
  @Test(
    .disabled(
      "BUG: each feature session retains a table of every ancestor module (memory ∝ container modules)")
  )
  func aThousandFeatureSessionsOverAContainerOfThreeHundredModulesStaySmall() throws {
    let container = try Container(modules: (0..<300).map { PluginModule(index: $0) })
    defer { try? container.close() }
    let before = residentBytes()
    var sessions: [Scope] = []
    for _ in 0..<1000 {
      sessions.append(try container.makeScope(.session, modules: [SessionFeatureModule()]))
    }
    let grown = residentBytes() - before
    for session in sessions { try session.close() }
    #expect(grown < 8 << 20, "1,000 feature sessions grew memory by \(grown >> 20) MiB")
  }
}
