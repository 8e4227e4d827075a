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
/// An error of a private class, without a description of its own.
private final class PrivateFailure: Error, Sendable {}

/// A disposable whose disposer throws a ``PrivateFailure``.
private final class FailingDisposer: Disposable, Sendable {
  func dispose() throws { throw PrivateFailure() }
}

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

  @Test func anErrorOfAPrivateClassReadsWithoutTheAddressOfItsContext() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in throw PrivateFailure() }
      registry.register(FailingDisposer.self, lifetime: .scoped) { _ in FailingDisposer() }
    }
    let factory = try #require(resolutionError { _ = try container.resolve(Widget.self) })
    #expect(factory.message == "the factory of `Widget` threw: StrataTests.PrivateFailure")
    let request = try container.makeScope(.request)
    _ = try request.resolve(FailingDisposer.self)
    let disposal = try #require(resolutionError { try request.close() })
    #expect(disposal.disposalErrors.map { "\($0)" } == ["FailingDisposer: StrataTests.PrivateFailure"])
  }
}
