import Strata
import Testing

/// A cached instance is found by what it was made for, never by an address that can be reused, and
/// two different keys never share a registration.
@Suite struct IdentityAndKeyTests {
  @Test func aClosedChildsScopedInstanceIsNeverHandedToTheNextChildsRegistration() throws {
    let container = Container()
    let session = try container.makeScope(.session)
    for _ in 0..<40 {
      do {
        let first = try session.makeScope(.request) { registry in
          registry.register(FirstScoped.self, lifetime: .scoped(.session)) { _ in FirstScoped() }
        }
        #expect(try first.resolve(FirstScoped.self).label == "first")
        try first.close()
      }
      let second = try session.makeScope(.request) { registry in
        registry.register(SecondScoped.self, lifetime: .scoped(.session)) { _ in SecondScoped() }
      }
      let instance = try second.resolve(SecondScoped.self)
      #expect(ObjectIdentifier(type(of: instance as AnyObject)) == ObjectIdentifier(SecondScoped.self))
      #expect(instance.numbers == [1, 2, 3] && instance.tag == 0x5EC0_0D)
      try second.close()
    }
    try container.close()
  }

  @Test func theRootScopeNeverConfusesInstancesOfClosedChildsRegistrations() throws {
    let container = Container()
    for _ in 0..<40 {
      do {
        let first = try container.makeScope(.request) { registry in
          registry.register(FirstScoped.self, lifetime: .scoped(.root)) { _ in FirstScoped() }
        }
        _ = try first.resolve(FirstScoped.self)
        try first.close()
      }
      let second = try container.makeScope(.request) { registry in
        registry.register(SecondScoped.self, lifetime: .scoped(.root)) { _ in SecondScoped() }
      }
      #expect(try second.resolve(SecondScoped.self).numbers == [1, 2, 3])
      try second.close()
    }
  }

  @Test func oneTupleArgumentAndTwoArgumentsAreDifferentKeys() throws {
    let container = try Container { registry in
      registry.register(ArgumentEcho.self) { (_, pair: (Int, String)) in
        ArgumentEcho(text: "tuple \(pair.0) \(pair.1)")
      }
    }
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(ArgumentEcho.self, arguments: 7, "x")
    }
    #expect(error.code == .notRegistered)
    #expect(error.key.argumentTypeList.count == 2)
    #expect(try container.resolve(ArgumentEcho.self, arguments: (7, "x")).text == "tuple 7 x")

    try container.register { registry in
      registry.register(ArgumentEcho.self) { (_, number: Int, text: String) in
        ArgumentEcho(text: "pair \(number) \(text)")
      }
    }
    #expect(try container.resolve(ArgumentEcho.self, arguments: 7, "x").text == "pair 7 x")
    #expect(try container.resolve(ArgumentEcho.self, arguments: (7, "x")).text == "tuple 7 x")
  }

  @Test func oneVoidArgumentIsNotNoArgument() throws {
    let container = try Container { registry in
      registry.register(ArgumentEcho.self) { (_, _: Void) in ArgumentEcho(text: "void argument") }
    }
    let error = try #require(throws: ResolutionError.self) { try container.resolve(ArgumentEcho.self) }
    #expect(error.code == .notRegistered)
    #expect(try container.resolve(ArgumentEcho.self, arguments: ()).text == "void argument")
  }

  @Test func aSharedLifetimeWithAVoidArgumentIsInvalid() throws {
    for lifetime in [Lifetime.singleton, .scoped, .weak, .eagerSingleton] {
      let error = try #require(throws: ResolutionError.self) {
        _ = try Container { registry in
          registry.register(Widget.self, lifetime: lifetime) { (_, _: Void) in Widget(id: 1) }
        }
      }
      #expect(error.code == .invalidRegistration, "\(lifetime)")
    }
  }

  @Test func argumentListsReadAsWritten() throws {
    let container = try Container { registry in
      registry.register(ArgumentEcho.self) { (_, pair: (Int, String)) in ArgumentEcho(text: "\(pair)") }
    }
    let error = try #require(throws: ResolutionError.self) {
      try container.resolve(ArgumentEcho.self, arguments: 1, "a")
    }
    #expect(error.key.description == "ArgumentEcho with arguments (Int, String)")
    #expect(error.hint?.contains("registered with arguments ((Int, String))") == true)
  }

  @Test func anOptionalNameFindsWhatTheSameOptionalRegistered() throws {
    let channel: String? = "audit"
    let none: String? = nil
    let container = try Container { registry in
      registry.register(Widget.self, name: channel) { _ in Widget(id: 1) }
      registry.register(Widget.self, name: none) { _ in Widget(id: 2) }
    }
    #expect(try container.resolve(Widget.self, name: channel).id == 1)
    #expect(try container.resolve(Widget.self, name: "audit").id == 1)
    #expect(try container.resolve(Widget.self, name: none).id == 2)
    #expect(try container.resolve(Widget.self).id == 2)
    #expect(try container.resolveIfRegistered(Widget.self, name: channel)?.id == 1)
    #expect(try container.resolveAll(Widget.self, name: channel).map(\.id) == [1])
  }
  @Test func keysAreEqualAndHashAlikeExactlyWhenTypeArgumentsAndNameAre() throws {
    let container = try Container { registry in
      registry.register(Widget.self) { _ in Widget(id: 1) }
      registry.register(Widget.self, name: "a") { _ in Widget(id: 2) }
      registry.register(Widget.self, name: 1) { _ in Widget(id: 3) }
      registry.register(Widget.self) { (_, id: Int) in Widget(id: id) }
      registry.register(Widget.self) { (_, id: Int, _: String) in Widget(id: id) }
      registry.register(ArgumentEcho.self) { _ in ArgumentEcho(text: "") }
    }
    let keys = container.registrations.map(\.key)
    #expect(Set(keys).count == 6)
    #expect(Dictionary(keys.map { ($0, 1) }, uniquingKeysWith: +).values.allSatisfy { $0 == 1 })
    // The same keys again, from a second container: equal and found in a set of the first ones.
    let again = try Container { registry in
      registry.register(Widget.self, name: 1) { _ in Widget(id: 3) }
      registry.register(Widget.self) { (_, id: Int, _: String) in Widget(id: id) }
    }.registrations.map(\.key)
    #expect(again.allSatisfy { Set(keys).contains($0) })
    #expect(Set(keys + again).count == 6)
  }
}
