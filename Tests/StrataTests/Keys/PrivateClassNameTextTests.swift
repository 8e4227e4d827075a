import Strata
import Testing

/// A name type private to this file, compared by value, without a description of its own: Swift
/// prints it with its module and, for a private type, an anonymous context that names an address.
private final class PrivateChannel: Hashable, Sendable {
  let id: Int
  init(_ id: Int) { self.id = id }
  static func == (lhs: PrivateChannel, rhs: PrivateChannel) -> Bool { lhs.id == rhs.id }
  func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// Name texts are the same in every process (messages, validation reports and exported graphs
/// show them): the address of a private type's context, which moves from run to run, is left out.
@Suite struct PrivateClassNameTextTests {
  @Test func aNameOfAPrivateClassReadsWithoutTheAddressOfItsContext() throws {
    let container = try Container { registry in
      registry.register(Widget.self, name: PrivateChannel(1)) { _ in Widget(id: 1) }
    }
    let error = try #require(
      resolutionError { _ = try container.resolve(Widget.self, name: PrivateChannel(2)) })
    #expect(error.key.nameDescription == "StrataTests.PrivateChannel")
    #expect(!error.description.contains("unknown context"))
    #expect(!error.description.contains("$"))
    let registered = try #require(container.registrations.first)
    #expect(registered.key.description == "Widget named StrataTests.PrivateChannel")
  }
}
