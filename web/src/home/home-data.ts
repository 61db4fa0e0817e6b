/** The home page's one read (GET /api/home): most played and newest worlds, the platform's AI, and the player's own (signed in). */
export const HOME_URL = '/api/home';
