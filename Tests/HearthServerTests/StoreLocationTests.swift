import HearthStore
import Testing
import HearthServer

/// `--store` parsed by the engines of this build (`Engines.all`), from literals.
@Suite struct StoreLocationTests {
    @Test func aLocationParsesAndHidesItsPassword() throws {
        #expect(try StoreLocation(parsing: "", defaultDirectory: "d") == .sqlite(directory: "d"))
        #expect(try StoreLocation(parsing: "sqlite:/x", defaultDirectory: "d") == .sqlite(directory: "/x"))
        let pg = try StoreLocation(parsing: "postgres://hearth:s3cret@db:5432/app", defaultDirectory: "d")
        #expect(pg == .postgres(url: "postgres://hearth:s3cret@db:5432/app"))
        #expect(pg.description == "postgres://hearth:***@db:5432/app")
        #expect(throws: StoreLocation.ParseError.self) { try StoreLocation(parsing: "mysql://x/y", defaultDirectory: "d") }
        #expect(throws: StoreLocation.ParseError.self) { try StoreLocation(parsing: "postgres://host", defaultDirectory: "d") }
    }

    /// The error names every engine's form, in the list's order; a location of an engine
    /// this list lacks does not open.
    @Test func theListOfEnginesDecides() throws {
        #expect(throws: StoreLocation.ParseError(description: "store: expected sqlite:<directory> or postgres://USER:PASSWORD@HOST:PORT/DATABASE")) {
            try StoreLocation(parsing: "mysql://x/y", defaultDirectory: "d")
        }
        #expect(throws: StoreLocation.ParseError(description: "store: a PostgreSQL URL names its database: postgres://USER:PASSWORD@HOST:PORT/DATABASE")) {
            try StoreLocation(parsing: "postgres://host", defaultDirectory: "d")
        }
        let onlyDefault = [Engines.all[0]]
        #expect(throws: StoreLocation.ParseError.self) {
            try StoreLocation(parsing: "postgres://h:p@db/app", defaultDirectory: "d", engines: onlyDefault)
        }
        #expect(throws: StoreError.self) { try Engines.open(.postgres(url: "postgres://h:p@db/app"), engines: onlyDefault) }
        #expect(try StoreLocation(parsing: "", defaultDirectory: "d", engines: onlyDefault) == .sqlite(directory: "d"))
    }
}
