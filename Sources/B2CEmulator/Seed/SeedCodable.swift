import B2CProtocol

// Each seed object is `Codable` through its field declarations (`SeedObject`): `JSONDecoder` and `JSONEncoder` read and
// write the seed as `EmulatorSeed.parse` and `json` do, with the same JSON-path refusals.

extension EmulatorSeed: Codable {
    public init(from decoder: any Decoder) throws { try self.init(decodingSeed: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeSeed(to: encoder) }
}

extension EmulatorSeed.Tenant: Codable {
    public init(from decoder: any Decoder) throws { try self.init(decodingSeed: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeSeed(to: encoder) }
}

extension EmulatorSeed.User: Codable {
    public init(from decoder: any Decoder) throws { try self.init(decodingSeed: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeSeed(to: encoder) }
}

extension EmulatorSeed.API: Codable {
    public init(from decoder: any Decoder) throws { try self.init(decodingSeed: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeSeed(to: encoder) }
}

extension EmulatorSeed.AppRole: Codable {
    public init(from decoder: any Decoder) throws { try self.init(decodingSeed: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeSeed(to: encoder) }
}

extension EmulatorSeed.App: Codable {
    public init(from decoder: any Decoder) throws { try self.init(decodingSeed: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeSeed(to: encoder) }
}

extension EmulatorSeed.Secret: Codable {
    public init(from decoder: any Decoder) throws { try self.init(decodingSeed: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeSeed(to: encoder) }
}

extension EmulatorSeed.APIConnector: Codable {
    public init(from decoder: any Decoder) throws { try self.init(decodingSeed: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeSeed(to: encoder) }
}

extension EmulatorSeed.AuthenticationExtension: Codable {
    public init(from decoder: any Decoder) throws { try self.init(decodingSeed: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeSeed(to: encoder) }
}

extension EmulatorSeed.Policy: Codable {
    public init(from decoder: any Decoder) throws { try self.init(decodingSeed: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeSeed(to: encoder) }
}

extension EmulatorSeed.OIDCProvider: Codable {
    public init(from decoder: any Decoder) throws { try self.init(decodingSeed: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeSeed(to: encoder) }
}

extension EmulatorSeed.SAMLProvider: Codable {
    public init(from decoder: any Decoder) throws { try self.init(decodingSeed: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeSeed(to: encoder) }
}
