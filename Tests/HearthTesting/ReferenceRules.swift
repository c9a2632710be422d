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
}
