import B2CProtocol
import Foundation

/// The claims transformations over structured text (reference: json-transformations.md, phone-number-claims-
/// transformations.md, string-transformations.md's `SetClaimsIfRegexMatch`): JSON built and read by dotted paths, phone
/// numbers parsed into B2C's E.164 form, a claim matched by a pattern under the tenant's regex time limit.
extension ClaimsTransformations {
    static let structured: [String: @Sendable (Call) throws -> Inputs] = [
        // JSON
        "GenerateJson": { c in
            // Every input claim and parameter is a value at its dotted path; a number in the path is an array index.
            var document = JSONValue.object([:])
            for (path, value) in c.parameters.sorted(by: { $0.key < $1.key }) { set(&document, path: path, to: .string(value)) }
            for (path, value) in c.inputs.sorted(by: { $0.key < $1.key }) { set(&document, path: path, to: PolicyRun.json(value)) }
            return ["outputClaim": .string(document.serialized())]
        },
        "GetNumericClaimFromJson": { c in
            guard let value = try json(c, "inputJson", path: try c.parameter("claimToExtract")) else { return [:] }
            guard let n = value.lenientInt else {
                throw TransformationFailure.input("the value at '\(try c.parameter("claimToExtract"))' is \(value.typeName), not a number")
            }
            return ["extractedClaim": .int(n)]
        },
        "GetSingleValueFromJsonArray": { c in
            guard let first = (try JSONValue.parse(try c.string("inputJsonClaim"))).arrayValue?.first else { return [:] }
            return ["extractedClaim": .string(first.stringValue ?? first.serialized())]
        },
        // Phone numbers
        "ConvertStringToPhoneNumberClaim": { c in
            let text = c.optionalString("phoneNumberString") ?? c.optionalString("inputClaim") ?? ""
            guard let phone = PhoneNumber(text, country: c.optionalString("country")) else {
                throw TransformationFailure.assertion(
                    key: "UserMessageIfClaimsTransformationInvalidPhoneNumber", fallback: "The phone number you provided is not valid.")
            }
            return ["outputClaim": .string(phone.e164)]
        },
        "ConvertPhoneNumberClaimToString": { c in ["phoneNumberString": .string(try c.string("phoneNumber"))] },
        "GetNationalNumberAndCountryCodeFromPhoneNumberString": { c in
            guard let phone = PhoneNumber(try c.string("phoneNumber"), country: nil) else {
                guard c.flag("throwExceptionOnFailure") else { return [:] }
                throw TransformationFailure.assertion(
                    key: "UserMessageIfPhoneNumberParseFailure", fallback: "The phone number you provided is not valid.")
            }
            let calling = c.parameters["countryCodeType"]?.lowercased() == "callingcode"
            return ["nationalNumber": .string(phone.national), "countryCode": .string(calling ? "+\(phone.callingCode)" : phone.region)]
        },
        // A pattern, under the tenant's time limit (a pattern that runs out of time does not match).
        "SetClaimsIfRegexMatch": { c in
            guard let regex = PolicyRegex.compile(try c.parameter("matchTo")) else {
                throw TransformationFailure.input("the input parameter 'matchTo' is not a regular expression")
            }
            let matched = regex.matches(try c.string("claimToMatch")) == .match
            var out: Inputs = ["regexCompareResultClaim": .bool(matched)]
            if matched, let value = c.parameters["outputClaimIfMatched"] { out["outputClaim"] = .string(value) }
            return out
        },
    ]

    /// The value at a dotted path of a JSON input claim; nil when the path leads nowhere.
    static func json(_ c: Call, _ claim: String, path: String) throws -> JSONValue? {
        guard let json = try? JSONValue.parse(try c.string(claim)) else {
            throw TransformationFailure.input("the input claim '\(claim)' is not JSON")
        }
        let value = path.split(separator: ".").reduce(json as JSONValue?) { node, key in
            if let i = Int(key), let items = node?.arrayValue { return items.indices.contains(i) ? items[i] : nil }
            return node?[String(key)]
        }
        return value == .null ? nil : value
    }

    /// Puts `value` at `path` in `document`, making the objects and arrays on the way.
    static func set(_ document: inout JSONValue, path: String, to value: JSONValue) {
        set(&document, Array(path.split(separator: ".").map(String.init))[...], value)
    }

    private static func set(_ node: inout JSONValue, _ path: ArraySlice<String>, _ value: JSONValue) {
        guard let key = path.first else {
            node = value
            return
        }
        if let index = Int(key), index >= 0, index < 1000 {
            var items = node.arrayValue ?? []
            while items.count <= index { items.append(.object([:])) }
            set(&items[index], path.dropFirst(), value)
            node = .array(items)
        } else {
            var object = node.objectValue ?? [:]
            var child = object[key] ?? .object([:])
            set(&child, path.dropFirst(), value)
            object[key] = child
            node = .object(object)
        }
    }
}

/// A phone number as B2C's transformations read it: a leading `+` and a country calling code (or a national number and
/// the ISO country given beside it), punctuation ignored, 7 to 15 digits in all (E.164).
struct PhoneNumber: Equatable {
    var callingCode: String
    var national: String
    /// The ISO 3166 region of the calling code (`+1` is read as `US`, the first of the countries that share it).
    var region: String
    var e164: String { "+\(callingCode)\(national)" }

    init?(_ text: String, country: String?) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.allSatisfy({ $0.isASCII && ($0.isNumber || " ()-.+/".contains($0)) }) else { return nil }
        let digits = trimmed.filter(\.isNumber)
        if trimmed.hasPrefix("+") {
            guard let code = (1...3).lazy.map({ String(digits.prefix($0)) }).first(where: { Self.regions[$0] != nil }) else {
                return nil
            }
            (callingCode, national, region) = (code, String(digits.dropFirst(code.count)), Self.regions[code]!)
        } else {
            guard let country = country?.uppercased(), let code = Self.regions.first(where: { $0.value == country })?.key else {
                return nil
            }
            // A national number's trunk prefix (the leading 0 of most countries) is not part of E.164.
            let national = digits.hasPrefix("0") && code != "39" ? String(digits.dropFirst()) : digits
            (callingCode, self.national, region) = (code, national, country)
        }
        guard (7...15).contains(callingCode.count + national.count), national.count >= 4 else { return nil }
    }

    /// Calling codes and the region each stands for (the shared `+1` and `+7` by their largest country).
    static let regions: [String: String] = [
        "1": "US", "7": "RU", "20": "EG", "27": "ZA", "30": "GR", "31": "NL", "32": "BE", "33": "FR", "34": "ES", "36": "HU",
        "39": "IT", "40": "RO", "41": "CH", "43": "AT", "44": "GB", "45": "DK", "46": "SE", "47": "NO", "48": "PL", "49": "DE",
        "51": "PE", "52": "MX", "54": "AR", "55": "BR", "56": "CL", "57": "CO", "60": "MY", "61": "AU", "62": "ID", "63": "PH",
        "64": "NZ", "65": "SG", "66": "TH", "81": "JP", "82": "KR", "84": "VN", "86": "CN", "90": "TR", "91": "IN", "92": "PK",
        "212": "MA", "234": "NG", "254": "KE", "351": "PT", "352": "LU", "353": "IE", "354": "IS", "358": "FI", "372": "EE",
        "380": "UA", "420": "CZ", "421": "SK", "852": "HK", "886": "TW", "966": "SA", "971": "AE", "972": "IL",
    ]
}
