import Foundation
/// The repository's reference rules (`rules.json`): each signed-in user reads and writes
/// only their own `/users/<uid>/favorites`, and each favourite carries its required fields
/// with `createdBy == auth.uid`. Kept as text so tests do not depend on the working
/// directory.
public enum ReferenceRules {
    public static let text = """
    {
      "rules": {
        "users": {
          "$uid": {
            "favorites": {
              ".read": "auth != null && auth.uid == $uid",
              ".write": "auth != null && auth.uid == $uid",
          ".indexOn": ["createdAt"],
              "$favoriteId": {
                ".validate": "newData.hasChildren(['id', 'name', 'createdAt', 'createdBy', 'latitude', 'longitude']) && newData.child('createdBy').val() == auth.uid"
              }
            }
          }
        }
      }
    }
    """

    /// The reference rules plus an `/open` subtree anyone may read and write (presence,
    /// counters and big values in the wire-protocol tests).
    public static let withOpenSubtree: String = {
        guard let rules = text.range(of: "\"rules\": {") else { preconditionFailure("no rules object") }
        return text[..<rules.upperBound] + "\n    \"open\": {\".read\": true, \".write\": true}," + text[rules.upperBound...]
    }()
}
