public import Strata

/// The error thrown by a placeholder registered with ``Strata/Registrar/registerUnimplemented(_:fileID:line:)``.
public struct UnimplementedError: Error, CustomStringConvertible {
  /// The service whose placeholder was resolved.
  public let service: String
  /// Where the placeholder was registered.
  public let registeredAt: SourceLocation

  /// `UserRepository is unimplemented (placeholder registered at AppTests/UserTests.swift:12)`.
  public var description: String {
    "\(service) is unimplemented (placeholder registered at \(registeredAt))"
  }
}

extension Registrar {
  /// Registers a placeholder for `type` that fails loudly when resolved, for tests that must not
  /// touch a service.
  ///
  /// ```swift
  /// let container = try Container { registry in
  ///   registry.registerUnimplemented(PaymentGateway.self)
  ///   registry.register(Checkout.self, Checkout.init)
  /// }
  /// #expect(throws: ResolutionError.self) { try container.resolve(Checkout.self) }
  /// ```
  ///
  /// - Parameters:
  ///   - type: The service that must not be resolved.
  ///   - fileID: Where the placeholder is registered; recorded in the error. Leave the default.
  ///   - line: The line of the placeholder; recorded in the error. Leave the default.
  public func registerUnimplemented<Service>(
    _ type: Service.Type, fileID: StaticString = #fileID, line: UInt = #line
  ) {
    let location = SourceLocation(fileID: String(describing: fileID), line: Int(line))
    register(type, fileID: fileID, line: line) { _ throws -> Service in
      throw UnimplementedError(service: String(describing: Service.self), registeredAt: location)
    }
  }
}
