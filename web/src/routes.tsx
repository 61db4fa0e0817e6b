import { type ComponentType, lazy, type LazyExoticComponent, type ReactNode } from 'react';
import { prefetch } from './lib/api.ts';
import { setLinkPreloader } from './lib/router.tsx';
import { HOME_URL } from './home/home-data.ts';
import { libraryPageUrl, LIBRARY_TAGS_URL } from './library/library-data.ts';
import { worldUrls } from './worlds/world-data.ts';
import { preloadPlayer } from './lib/player-reads.ts';
import { NotFound } from './shell/NotFound.tsx';

/**
 * The web app's pages, one lazily loaded chunk each (route-level code splitting): the first load of
 * a page carries the shell (header, router, session) and that page's own code, nothing of the
 * studio, CodeMirror, the player, the sandbox runtime, the companion board or admin until they are
 * entered. `preloadRoute` starts a page's chunk and the API reads its first screen needs at once,
 * in parallel (main.tsx, before the first render; links, on hover or focus), so a page waits for
 * one API round trip, not for its chunk and then its data.
 */

/** A page module's loader and its named export as a lazy component (React.lazy wants a default export). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any page props: each lazy component keeps its own
function page<M extends Record<K, ComponentType<any>>, K extends keyof M>(load: () => Promise<M>, name: K): { load: () => Promise<M>; Component: LazyExoticComponent<M[K]> } {
  return { load, Component: lazy(() => load().then((m) => ({ default: m[name] }))) };
}

const pages = {
  home: page(() => import('./home/HomePage.tsx'), 'HomePage'),
  auth: page(() => import('./pages/AuthPage.tsx'), 'AuthPage'),
  forgotPassword: page(() => import('./account/ForgotPasswordPage.tsx'), 'ForgotPasswordPage'),
  resetPassword: page(() => import('./account/ResetPasswordPage.tsx'), 'ResetPasswordPage'),
  verifyEmail: page(() => import('./account/VerifyEmailPage.tsx'), 'VerifyEmailPage'),
  completeSignup: page(() => import('./account/CompleteSignupPage.tsx'), 'CompleteSignupPage'),
  settings: page(() => import('./pages/SettingsPage.tsx'), 'SettingsPage'),
  models: page(() => import('./pages/ModelsPage.tsx'), 'ModelsPage'),
  library: page(() => import('./library/LibraryPage.tsx'), 'LibraryPage'),
  player: page(() => import('./pages/PlayerPage.tsx'), 'PlayerPage'),
  myWorlds: page(() => import('./studio/MyWorldsPage.tsx'), 'MyWorldsPage'),
  studio: page(() => import('./studio/StudioPage.tsx'), 'StudioPage'),
  character: page(() => import('./studio/CharacterEditor.tsx'), 'CharacterEditorPage'),
  reviews: page(() => import('./admin/ReviewsPage.tsx'), 'ReviewsPage'),
  credits: page(() => import('./admin/CreditsPage.tsx'), 'CreditsPage'),
  board: page(() => import('./companion/DemoBoard.tsx'), 'DemoBoardPage'),
  devSandbox: page(() => import('./sandbox/dev-route.tsx'), 'DevSandboxRoute'),
  inbox: page(() => import('./updates/InboxPage.tsx'), 'InboxPage'),
  world: page(() => import('./worlds/WorldPage.tsx'), 'WorldPage'),
  groups: page(() => import('./groups/GroupsPage.tsx'), 'GroupsPage'),
  groupScene: page(() => import('./groups/GroupScenePage.tsx'), 'GroupScenePage'),
  room: page(() => import('./rooms/RoomPage.tsx'), 'RoomPage'),
  joinRoom: page(() => import('./rooms/JoinPage.tsx'), 'JoinPage'),
};
const { home, auth, forgotPassword, resetPassword, verifyEmail, completeSignup, settings, models, library, player, myWorlds, studio, character, reviews, credits, board, devSandbox, inbox, world, groups, groupScene, room, joinRoom } = pages;

interface Route {
  test: RegExp;
  /** The page's chunk. */
  load?: () => Promise<unknown>;
  /** API reads (GET paths) its first screen needs, known from the address alone. */
  data?: (path: string, search: URLSearchParams) => string[];
  /** Reads that depend on each other (each started as soon as what it needs is known). */
  preload?: (path: string, search: URLSearchParams) => void;
  render(path: string): ReactNode;
}

/** The last segment of a path below `prefix`, decoded. */
const param = (path: string, prefix: string) => decodeURIComponent(path.slice(prefix.length).replace(/\/$/, ''));

const ROUTES: Route[] = [
  { test: /^\/$/, load: home.load, data: () => [HOME_URL], render: () => <home.Component /> },
  { test: /^\/login$/, load: auth.load, render: () => <auth.Component mode="login" key="login" /> },
  { test: /^\/signup$/, load: auth.load, render: () => <auth.Component mode="signup" key="signup" /> },
  { test: /^\/forgot-password$/, load: forgotPassword.load, render: () => <forgotPassword.Component /> },
  { test: /^\/reset-password$/, load: resetPassword.load, render: () => <resetPassword.Component /> },
  { test: /^\/verify-email$/, load: verifyEmail.load, render: () => <verifyEmail.Component /> },
  { test: /^\/complete-signup$/, load: completeSignup.load, render: () => <completeSignup.Component /> },
  { test: /^\/app\/settings\/?$/, load: settings.load, render: () => <settings.Component /> },
  { test: /^\/app\/models$/, load: models.load, render: () => <models.Component /> },
  { test: /^\/library$/, load: library.load, data: (_p, search) => [libraryPageUrl(search), LIBRARY_TAGS_URL], render: () => <library.Component /> },
  { test: /^\/play\/[^/]+$/, load: player.load, preload: (path, search) => preloadPlayer(param(path, '/play/'), search), render: (path) => <player.Component worldId={param(path, '/play/')} /> },
  { test: /^\/groups\/?$/, load: groups.load, render: () => <groups.Component /> },
  { test: /^\/groups\/[^/]+$/, load: groupScene.load, render: (path) => <groupScene.Component sessionId={param(path, '/groups/')} key={path} /> },
  { test: /^\/studio\/?$/, load: myWorlds.load, render: () => <myWorlds.Component /> },
  { test: /^\/studio\/[^/]+\/?$/, load: studio.load, render: (path) => <studio.Component path={path} /> },
  { test: /^\/studio\/[^/]+\/character\/?$/, load: character.load, render: (path) => <character.Component path={path} /> },
  { test: /^\/admin\/reviews$/, load: reviews.load, render: () => <reviews.Component /> },
  { test: /^\/admin\/credits$/, load: credits.load, render: () => <credits.Component /> },
  { test: /^\/adventure\/demo$/, load: board.load, render: () => <board.Component /> },
  { test: /^\/dev\/sandbox$/, load: devSandbox.load, render: () => <devSandbox.Component /> },
  { test: /^\/(app\/)?inbox$/, load: inbox.load, render: () => <inbox.Component /> },
  { test: /^\/rooms\/join\/?$/, load: joinRoom.load, render: () => <joinRoom.Component /> },
  { test: /^\/rooms\/[^/]+\/?$/, load: room.load, render: (path) => <room.Component roomId={param(path, '/rooms/')} /> },
  { test: /^\/worlds\/[^/]+\/?$/, load: world.load, data: (path) => worldUrls(param(path, '/worlds/')), render: (path) => <world.Component id={param(path, '/worlds/')} /> },
];

const routeOf = (path: string): Route | undefined => ROUTES.find((r) => r.test.test(path));

/** The page of an address; anything unknown is the "not found" page. */
export function renderRoute(path: string): ReactNode {
  return routeOf(path)?.render(path) ?? <NotFound />;
}

/**
 * Starts loading the page of `to` (a path with an optional query): its chunk and, when `withData`,
 * the API reads of its first screen. A chunk that fails to load is reported by the page's error
 * boundary when the page renders, not here.
 */
export function preloadRoute(to: string, withData = true): void {
  const url = new URL(to, window.location.origin);
  const route = routeOf(url.pathname);
  if (!route) return;
  route.load?.().catch(() => {});
  if (!withData) return;
  for (const path of route.data?.(url.pathname, url.searchParams) ?? []) prefetch(path);
  route.preload?.(url.pathname, url.searchParams);
}

// A link the reader points at or focuses loads its page's code, not yet its data (it may not be followed).
setLinkPreloader((to) => preloadRoute(to, false));
