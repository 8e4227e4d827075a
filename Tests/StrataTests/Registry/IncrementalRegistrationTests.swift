import Foundation
import Strata
import Testing

/// The resident memory of this process, in bytes.
private func residentBytes() -> Int {
  guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
  let fields = text.split(separator: " ")
  guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
  return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Whether a sanitizer runtime is loaded: AddressSanitizer keeps freed memory in quarantine, so
/// resident memory says nothing about what the code keeps.
private var isSanitized: Bool {
  dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") != nil
    || dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
}

/// Registering services one batch at a time costs O(N log N) memory, not a snapshot per batch, and
/// every registration stays findable, the latest winning.
@Suite struct IncrementalRegistrationTests {
  @Test func threeThousandOneAtATimeRegistrationsStayFindableAndSmall() throws {
    let container = Container()
    let before = residentBytes()
    for index in 0..<3_000 {
      try container.register { registry in
        registry.register(Widget.self, name: index) { _ in Widget(id: index) }
      }
    }
    let growth = residentBytes() - before
    // Keeping a full snapshot per batch took ~40 MiB for 1,200 such batches and grows with the
    // square (~250 MiB for these 3,000); what remains is a few MiB. Resident memory is the whole
    // process's, and the suites running beside this one allocate too (they added 52 MiB once), hence
    // the margin, still half of what a snapshot per batch would take.
    if !isSanitized {
      #expect(growth < 128 * 1024 * 1024, "resident memory grew by \(growth / 1024 / 1024) MiB")
    }
    for index in stride(from: 0, to: 3_000, by: 7) {
      #expect(try container.resolve(Widget.self, name: index).id == index)
    }
    #expect(container.registrations.count == 3_000)
  }

  @Test func theLatestRegistrationWinsAcrossBatchesOfAnySize() throws {
    let container = Container()
    var expected: [Int: Int] = [:]
    var generator = SystemRandomNumberGenerator()
    var next = 0
    for _ in 0..<200 {
      let batch = Int.random(in: 1...9, using: &generator)
      try container.register { registry in
        for _ in 0..<batch {
          let key = Int.random(in: 0..<40, using: &generator)
          let value = next
          next += 1
          expected[key] = value
          registry.register(Widget.self, name: key) { _ in Widget(id: value) }
          if key < 5 { registry.register(Greeting.self) { _ in Greeting(text: "\(value)") } }
        }
      }
    }
    for (key, value) in expected {
      #expect(try container.resolve(Widget.self, name: key).id == value)
    }
    let greetings = try container.resolveAll(Greeting.self).map(\.text)
    #expect(greetings == greetings.sorted { Int($0)! < Int($1)! }, "resolveAll is in registration order")
    if let last = greetings.last { #expect(try container.resolve(Greeting.self).text == last) }
  }
}
