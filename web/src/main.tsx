import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { applyTheme } from './lib/theme.ts';
import { preloadRoute } from './routes.tsx';
import './styles.css';

// The theme chosen in the app, before anything is painted.
applyTheme();

// The page's chunk and its first reads start now, in parallel, before React renders anything.
preloadRoute(window.location.pathname + window.location.search);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
