@_exported import B2CProtocol
